"use strict";
// The study explorer. All text from the store is written with textContent, never as HTML.
// Filtering runs over flat arrays built once; only one page of the list is ever in the DOM.
// Long texts sit in gzip chunks that are decoded only when a row is shown or a text search runs.
(function () {
  const PAGE_SIZE = 50;
  const CONDITIONS = ["single_a", "single_b", "cross"];
  const VERDICTS = ["published", "not_published", "unsure"];
  const D = JSON.parse(document.getElementById("explorer-data").textContent);
  const OPEN = D.unblinded_at !== null && D.unblinded_at !== undefined;

  function columns(table) {
    const c = {};
    table.columns.forEach((name, i) => { c[name] = i; });
    return c;
  }
  const I = columns(D.items), R = columns(D.reviews), V = columns(D.reviewers);
  const items = D.items.rows, reviews = D.reviews.rows, reviewers = D.reviewers.rows;
  const nItems = items.length;

  // -- long texts: chunk k of a kind holds rows [k * chunk, (k + 1) * chunk) -------------------
  const chunks = { items: [], prompts: [], outputs: [], search: [] };
  async function decode(id) {
    const b64 = document.getElementById(id).textContent;
    const binary = atob(b64), bytes = new Uint8Array(binary.length);
    for (let n = 0; n < binary.length; n++) bytes[n] = binary.charCodeAt(n);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }
  function need(kind, rows) {
    const wanted = new Set(rows.filter((n) => n >= 0).map((n) => Math.floor(n / D.chunk)));
    return Promise.all(Array.from(wanted, (k) => {
      if (!chunks[kind][k]) {
        chunks[kind][k] = decode("text-" + kind + "-" + k).then((rows) => { chunks[kind][k] = rows; return rows; });
      }
      return chunks[kind][k];
    }));
  }
  function txt(kind, n) { return chunks[kind][Math.floor(n / D.chunk)][n % D.chunk]; }
  // item text row: [display_text, core_combination, [[prior_work, notes] per review], searches]
  const SEARCH = { reviewer: 0, database: 1, query: 2, run_at: 3, total_hits: 4, filters: 5, hits: 6,
    relevant: 7 };

  // -- indexes built once ---------------------------------------------------------------------
  const itemReviews = Array.from({ length: nItems }, () => []);
  reviews.forEach((r, j) => { if (r[R.item] >= 0) itemReviews[r[R.item]].push(j); });
  const itemById = new Map(items.map((row, i) => [row[I.item_id], i]));

  let T = null, P = null, O = null, topics = [], prompts = [], outputs = [];
  let itemTopic = null, itemCondition = null, itemModel = null, topicItems = [], models = [];
  let topicPrompts = [], promptOutputs = [];
  const topicById = new Map();
  const itemOfOutput = new Map();
  if (OPEN) {
    T = columns(D.topics); P = columns(D.prompts); O = columns(D.outputs);
    topics = D.topics.rows; prompts = D.prompts.rows; outputs = D.outputs.rows;
    topics.forEach((t, i) => topicById.set(t[T.topic_id], i));
    // a model by its key in the study: two configurations of one model are two names
    models = Array.from(new Set(outputs.map((o) => o[O.name]))).sort();
    const modelIndex = new Map(models.map((m, i) => [m, i]));
    itemTopic = new Int32Array(nItems).fill(-1);
    itemCondition = new Int8Array(nItems).fill(-1);
    itemModel = new Int32Array(nItems).fill(-1);
    topicItems = Array.from({ length: topics.length }, () => []);
    topicPrompts = Array.from({ length: topics.length }, () => []);
    promptOutputs = Array.from({ length: prompts.length }, () => []);
    prompts.forEach((p, n) => { if (p[P.topic] >= 0) topicPrompts[p[P.topic]].push(n); });
    outputs.forEach((o, k) => { if (o[O.prompt] >= 0) promptOutputs[o[O.prompt]].push(k); });
    D.item_output.forEach((o, i) => {
      if (o < 0) return;
      itemOfOutput.set(o, i);
      const p = prompts[outputs[o][O.prompt]];
      itemModel[i] = modelIndex.get(outputs[o][O.name]);
      if (!p) return;
      itemCondition[i] = CONDITIONS.indexOf(p[P.condition]);
      itemTopic[i] = p[P.topic];
      if (p[P.topic] >= 0) topicItems[p[P.topic]].push(i);
    });
  }

  // -- text search: per item the lower-cased text made by the harness, decoded on the first query
  let itemBlobs = null, topicBlobs = null, blobsLoading = null;
  function lower(parts) { return parts.filter((x) => x !== null && x !== undefined).join("\n").toLowerCase(); }
  async function loadBlobs() {
    await need("search", Array.from({ length: nItems }, (_, i) => i));
    itemBlobs = Array.from({ length: nItems }, (_, i) => txt("search", i));
    topicBlobs = topics.map((t) => lower([t[T.topic_id], t[T.field_a], t[T.field_b], t[T.domain_a],
      t[T.domain_b], t[T.concepts_a].join(" "), t[T.concepts_b].join(" "), t[T.relation]]));
  }

  // -- filters --------------------------------------------------------------------------------
  const $ = (id) => document.getElementById(id);
  const state = { list: OPEN ? "topics" : "items", page: 0, rows: [], current: null };

  function filters() {
    return {
      q: $("q").value.trim().toLowerCase(),
      condition: OPEN ? $("f-condition").value : "",
      model: OPEN ? $("f-model").value : "",
      reviewer: $("f-reviewer").value === "" ? -1 : Number($("f-reviewer").value),
      verdict: $("f-verdict").value,
    };
  }

  function structural(f, i) {
    if (f.condition !== "" && itemCondition[i] !== Number(f.condition)) return false;
    if (f.model !== "" && itemModel[i] !== Number(f.model)) return false;
    if (f.reviewer < 0 && f.verdict === "") return true;
    return itemReviews[i].some((j) => (f.reviewer < 0 || reviews[j][R.reviewer] === f.reviewer)
      && (f.verdict === "" || reviews[j][R.verdict] === f.verdict));
  }

  function itemMatches(f) {
    const hit = new Uint8Array(nItems);
    for (let i = 0; i < nItems; i++) {
      if (!structural(f, i)) continue;
      const topicText = OPEN && itemTopic[i] >= 0 && f.q && topicBlobs[itemTopic[i]].includes(f.q);
      if (!f.q || topicText || itemBlobs[i].includes(f.q)) hit[i] = 1;
    }
    return hit;
  }

  let filterRun = 0;
  async function applyFilters() {
    const run = ++filterRun;
    const f = filters();
    if (f.q && !itemBlobs) {
      $("count").textContent = "reading texts\u2026";
      blobsLoading = blobsLoading || loadBlobs();
      await blobsLoading;
      if (run !== filterRun) return;
    }
    const hit = itemMatches(f);
    const rows = [];
    if (state.list === "topics") {
      const structuralOnly = f.condition === "" && f.model === "" && f.reviewer < 0 && f.verdict === "";
      for (let t = 0; t < topics.length; t++) {
        const any = topicItems[t].some((i) => hit[i] === 1);
        const bare = structuralOnly && (!f.q || topicBlobs[t].includes(f.q));
        if (any || bare) rows.push(t);
      }
    } else {
      for (let i = 0; i < nItems; i++) if (hit[i]) rows.push(i);
    }
    state.rows = rows;
    state.hit = hit;
    state.page = 0;
    renderList();
    document.body.dataset.filtered = String(run);
  }

  // -- DOM helpers ----------------------------------------------------------------------------
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => {
      if (k === "text") node.textContent = v; else node.setAttribute(k, v);
    });
    children.forEach((c) => { if (c !== null && c !== undefined) node.append(c); });
    return node;
  }
  function text(value) { return value === null || value === undefined ? "" : String(value); }
  function table(header, rows) {
    const head = el("tr", null, ...header.map((h) => el("th", { text: h })));
    const body = rows.map((r) => el("tr", null, ...r.map((c) =>
      c instanceof Node ? el("td", null, c) : el("td", { text: text(c) }))));
    return el("table", null, el("thead", null, head), el("tbody", null, ...body));
  }
  // A note or prior-work field holding a JSON object or list (automated reviewers record their
  // evidence so) reads as "key: value" lines; any other text is shown as written.
  function inline(v) {
    if (Array.isArray(v)) return v.map(inline).join("; ");
    if (v && typeof v === "object") {
      return Object.entries(v).map(([k, x]) => k.replace(/_/g, " ") + ": " + inline(x)).join(", ");
    }
    return text(v);
  }
  function readable(value) {
    const s = text(value).trim();
    let v = null;
    if (/^[[{]/.test(s)) { try { v = JSON.parse(s); } catch (e) { v = null; } }
    if (!v || typeof v !== "object") return text(value);
    const lines = Array.isArray(v) ? v.map(inline)
      : Object.entries(v).map(([k, x]) => k.replace(/_/g, " ") + ": " + inline(x));
    return el("div", { class: "note", style: "white-space:pre-line", text: lines.join("\n") });
  }
  function verdictSpan(v) { return el("span", { class: "verdict-" + v, text: v }); }

  function verdictSummary(list) {
    const counts = {};
    list.forEach((i) => itemReviews[i].forEach((j) => {
      const v = reviews[j][R.verdict]; counts[v] = (counts[v] || 0) + 1;
    }));
    return VERDICTS.filter((v) => counts[v]).map((v) => v + " " + counts[v]).join(", ");
  }

  // -- list -----------------------------------------------------------------------------------
  function renderList() {
    const list = $("list");
    const pages = Math.max(1, Math.ceil(state.rows.length / PAGE_SIZE));
    state.page = Math.min(state.page, pages - 1);
    const start = state.page * PAGE_SIZE;
    const rows = state.rows.slice(start, start + PAGE_SIZE).map((n) => listRow(n));
    list.replaceChildren(...rows);
    const noun = state.list === "topics" ? "topics" : "items";
    $("count").textContent = state.rows.length + " " + noun + " match";
    $("page").textContent = "page " + (state.page + 1) + " of " + pages;
    $("prev").disabled = state.page === 0;
    $("next").disabled = state.page >= pages - 1;
  }

  function listRow(n) {
    const li = el("li", { "data-index": String(n) });
    if (state.list === "topics") {
      const t = topics[n];
      li.dataset.kind = "topic";
      li.append(el("span", { class: "id", text: t[T.topic_id] }), " ",
        el("span", { text: t[T.field_a] + " \u00d7 " + t[T.field_b] }),
        el("div", { class: "muted", text: topicItems[n].length + " items; " + verdictSummary(topicItems[n]) }));
    } else {
      const row = items[n];
      li.dataset.kind = "item";
      li.append(el("span", { class: "id", text: row[I.item_id] }),
        el("div", { text: text(row[I.preview]) }),
        el("div", { class: "muted", text: verdictSummary([n]) }));
    }
    return li;
  }

  // -- detail: load the chunks a view needs, then draw it -------------------------------------
  let shown = 0;
  async function show(load, draw) {
    const run = ++shown;
    await load();
    if (run === shown) { $("detail").replaceChildren(...draw()); document.body.dataset.shown = String(run); }
  }

  function showTopic(t) {
    const ps = topicPrompts[t];
    const os = [].concat(...ps.map((n) => promptOutputs[n]));
    const its = os.map((k) => itemOfOutput.get(k)).filter((i) => i !== undefined);
    return show(() => Promise.all([need("prompts", ps), need("outputs", os), need("items", its)]),
      () => topicView(t, ps));
  }

  function topicView(t, ps) {
    const row = topics[t];
    const detail = [el("h2", { text: "Topic " + row[T.topic_id] }),
      table(["field A", "field B", "concepts A", "concepts B", "relation"],
        [[row[T.field_a] + " (" + row[T.domain_a] + ")", row[T.field_b] + " (" + row[T.domain_b] + ")",
          row[T.concepts_a].join("; "), row[T.concepts_b].join("; "), row[T.relation]]])];
    ps.forEach((n) => {
      const p = prompts[n];
      const card = el("div", { class: "card" }, el("h3", { text: p[P.condition] + " prompt " }),
        el("span", { class: "tag", text: p[P.prompt_id] }), el("span", { class: "tag", text: p[P.family] }),
        el("div", { class: "text", text: txt("prompts", n)[0] }));
      promptOutputs[n].forEach((k) => card.append(outputBlock(k)));
      detail.push(card);
    });
    return detail;
  }

  function outputBlock(k) {
    const o = outputs[k], [body, error] = txt("outputs", k);
    const block = el("div", { class: "card" }, el("h3", { text: "Output, sample " + o[O.sample] }),
      el("span", { class: "tag", text: o[O.name] }), el("span", { class: "tag", text: o[O.status] }),
      el("div", { class: "text", text: text(body || error) }));
    const i = itemOfOutput.get(k);
    if (i !== undefined) {
      if (state.hit && !state.hit[i]) block.classList.add("dim");
      const link = el("a", { class: "item-link", href: "#item=" + encodeURIComponent(items[i][I.item_id]),
        text: items[i][I.item_id] });
      block.append(el("div", null, "Blinded item ", link, " \u2014 " + verdictSummary([i])));
    }
    return block;
  }

  function showItem(i) {
    const k = OPEN ? D.item_output[i] : -1;
    const p = k >= 0 ? outputs[k][O.prompt] : -1;
    return show(() => Promise.all([need("items", [i]), need("outputs", [k]), need("prompts", [p])]),
      () => itemView(i));
  }

  function itemView(i) {
    const row = items[i], [display, core, notes, found] = txt("items", i);
    const detail = [el("h2", { text: "Item " + row[I.item_id] })];
    if (OPEN && D.item_output[i] >= 0) {
      const o = outputs[D.item_output[i]], p = prompts[o[O.prompt]];
      const t = p ? topics[p[P.topic]] : null;
      const back = t ? el("a", { class: "item-link", href: "#topic=" + encodeURIComponent(t[T.topic_id]),
        text: t[T.topic_id] }) : "";
      detail.push(el("p", null, "Topic ", back, " \u00b7 condition " + (p ? p[P.condition] : "?")
        + " \u00b7 model " + o[O.name] + " \u00b7 sample " + o[O.sample]));
    } else if (OPEN) {
      detail.push(el("p", { class: "muted", text: "This item has no model output (a control item)." }));
    }
    if (core) detail.push(el("h3", { text: "Core combination" }), el("div", { class: "text", text: core }));
    detail.push(el("h3", { text: "Text shown to reviewers" }), el("div", { class: "text", text: display }));
    detail.push(el("h3", { text: "Reviews" }), table(["reviewer", "kind", "verdict", "confidence", "prior work", "notes"],
      itemReviews[i].map((j, n) => {
        const r = reviews[j], who = reviewers[r[R.reviewer]] || [];
        return [text(who[V.reviewer_id]), text(who[V.kind]), verdictSpan(r[R.verdict]), r[R.confidence],
          readable(notes[n][0]), readable(notes[n][1])];
      })));
    detail.push(el("h3", { id: "searches", text: "Searches (" + found.length + ")" }));
    found.forEach((s) => detail.push(searchBlock(s)));
    return detail;
  }

  function parseList(json) {
    try { const value = JSON.parse(json || "[]"); return Array.isArray(value) ? value : []; }
    catch (e) { return []; }
  }

  function searchBlock(s) {
    const who = reviewers[s[SEARCH.reviewer]] || [];
    const hits = parseList(s[SEARCH.hits]).filter((h) => h && typeof h === "object");
    const relevant = new Set(parseList(s[SEARCH.relevant]).map(String));
    const summary = el("summary", { text: text(who[V.reviewer_id]) + " \u00b7 " + s[SEARCH.database] + ": \u201c"
      + s[SEARCH.query] + "\u201d \u00b7 " + text(s[SEARCH.total_hits]) + " hits, " + hits.length + " retrieved \u00b7 "
      + s[SEARCH.run_at] });
    return el("details", { class: "search" }, summary,
      s[SEARCH.filters] ? el("div", { class: "muted", text: "filters: " + s[SEARCH.filters] }) : null,
      table(["rank", "title", "year", "doi", "id", "score", "marked relevant"], hits.map((h, n) =>
        [h.rank === undefined ? n + 1 : h.rank, h.title, h.year, h.doi, h.id, h.score,
          relevant.has(String(h.id)) ? "yes" : ""])));
  }

  // -- navigation: #topic=ID or #item=ID, so the back button works ------------------------------
  function route() {
    let hash = "";
    try { hash = decodeURIComponent(location.hash.slice(1)); } catch (e) { return; }
    const eq = hash.indexOf("=");
    const kind = hash.slice(0, eq), id = hash.slice(eq + 1);
    if (kind === "item" && itemById.has(id)) showItem(itemById.get(id)).catch(fail);
    else if (kind === "topic" && topicById.has(id)) showTopic(topicById.get(id)).catch(fail);
  }

  // -- set-up ---------------------------------------------------------------------------------
  function options(select, pairs) {
    select.replaceChildren(el("option", { value: "", text: "all" }),
      ...pairs.map(([value, label]) => el("option", { value: String(value), text: label })));
  }
  function fail(error) {
    console.error(error);
    $("detail").replaceChildren(el("p", { class: "banner", text: "Could not show this record: " + error }));
  }
  function refilter() { applyFilters().catch(fail); }

  // Accuracy on the real items against the adjudicators (after unblinding, from the report).
  function showRealAccuracy() {
    const acc = D.real_accuracy;
    if (!acc || !acc.rows.length) return;
    const A = columns(acc);
    const rate = (r, k) => r[A[k]] === null ? "n/a"
      : r[A[k]].toFixed(2) + " [" + r[A[k + "_low"]].toFixed(2) + ", " + r[A[k + "_high"]].toFixed(2) + "]";
    $("detail").append(el("h3", { text: "Accuracy on the real items, against the adjudicators" }),
      table(["reviewer", "arm", "published", "sensitivity", "unpublished", "specificity"],
        acc.rows.map((r) => [r[A.label], r[A.arm], r[A.published], rate(r, "sensitivity"),
          r[A.unpublished], rate(r, "specificity")])));
  }

  function setup() {
    if (D.study_id) $("title").textContent = "Study explorer: " + D.study_id;
    const banner = $("banner");
    if (OPEN) {
      banner.textContent = "Unblinded " + D.unblinded_at + ": topics, prompts, outputs, conditions and models are shown.";
      banner.classList.add("open");
      ["l-list", "l-condition", "l-model"].forEach((id) => { $(id).hidden = false; });
      options($("f-condition"), CONDITIONS.map((c, n) => [n, c]));
      options($("f-model"), models.map((m, n) => [n, m]));
    } else {
      banner.textContent = "Blinded: only what reviewers saw (items, reviews, searches). Topics, prompts, "
        + "conditions and models appear once every assigned review is in and `harness analyze` "
        + "has unblinded the study (`harness status` says what is outstanding).";
    }
    options($("f-reviewer"), reviewers.map((r, n) => [n, r[V.reviewer_id] + " (" + r[V.kind]
      + (r[V.role] === "adjudicator" ? ", adjudicator" : "") + ")"]));
    showRealAccuracy();
    options($("f-verdict"), VERDICTS.map((v) => [v, v]));
    ["f-list", "f-condition", "f-model", "f-reviewer", "f-verdict"].forEach((id) =>
      $(id).addEventListener("change", () => { if (OPEN) state.list = $("f-list").value; refilter(); }));
    $("q").addEventListener("input", refilter);
    $("filters").addEventListener("submit", (e) => e.preventDefault());
    $("prev").addEventListener("click", () => { state.page -= 1; renderList(); });
    $("next").addEventListener("click", () => { state.page += 1; renderList(); });
    $("list").addEventListener("click", (e) => {
      const li = e.target.closest("li");
      if (!li) return;
      const n = Number(li.dataset.index);
      const id = li.dataset.kind === "topic" ? topics[n][T.topic_id] : items[n][I.item_id];
      location.hash = li.dataset.kind + "=" + encodeURIComponent(id);
    });
    window.addEventListener("hashchange", route);
    refilter();
    route();
    document.body.dataset.readyMs = String(Math.round(performance.now()));
    document.body.dataset.ready = "1";
  }
  setup();
})();
