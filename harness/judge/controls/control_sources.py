"""Control items: combinations with a known answer, mixed into the blinded stream.

Sources: the study's topics' bank entries (`known_links`, cross-field; `known_within_a` and
`known_within_b` when the bank has them, single-field) split by the cut-off's year (before it:
`published`; after it: `not_published`, since a reviewer who respects the cut-off must not count
later work; in its own year: left out, since a year alone cannot place it), and a controls file.

A control becomes an item in exactly the form of a real one: its planted pair of concepts (the
link's `concepts`, else the topic's concepts its title and summary state) fills the slots of the
study's own template for the topic's condition, the study's model writes the text with the
settings of its real outputs (one of the study's models or configurations each, spread evenly),
the normal blinded steps run on it, and it is kept only where its extracted core combination
states the planted pair (KEEP_RULE); its id comes from the same random generator as real items.
A control from a file with its own `text` is shown as written.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
import secrets
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, TypedDict, cast

from pydantic import JsonValue

from harness.collection.collect_stage import open_model as open_collect_model
from harness.collection.collect_stage import study_models
from harness.defaults import materials_dir
from harness.errors import HarnessError
from harness.judge.controls.controls_file import FileControl
from harness.judge.items.blinded_items import (
    SENTENCE_END,
    StepEntry,
    new_item_id,
    step_on_texts,
    step_specs,
)
from harness.materials.templates import load_families, render
from harness.models.base import ChatRequest
from harness.models.grouped import complete_groups
from harness.models.throughput import Meter, record_decoding
from harness.progress import counted
from harness.study.manifest import read_manifest
from harness.study.records import JsonObject
from harness.study.store import Study
from harness.study.tables.controls import (
    NewControl,
    TopicSlots,
    insert_controls,
    ok_output_model_keys,
    topic_slots,
)
from harness.study.tables.items import NewItem, insert_items, item_ids, set_core_combination
from harness.study.tables.judge_reads import topic_entries
from harness.study.text import storable

if TYPE_CHECKING:  # jinja2 loads with the templates, when controls are made
    from harness.collection.model_plan import ModelRun
    from harness.materials.templates import Family
    from harness.models.base import ChatRequest, ModelAPI

Expected = Literal["published", "not_published"]
BANK_LISTS: tuple[tuple[str, Literal["cross", "single"]], ...] = (
    ("known_links", "cross"),
    ("known_within_a", "single"),
    ("known_within_b", "single"),
)


@dataclass(frozen=True)
class Candidate:
    """A control that could enter the study."""

    control_id: str
    statement: str
    expected: Expected
    kind: Literal["cross", "single"]
    source: str  # 'bank' | 'file:NAME'
    topic_id: str | None
    evidence: JsonObject | None
    text: str | None = None
    pair: tuple[str, str] | None = None  # the planted concepts (concept_1, concept_2)
    fields: tuple[str, str] | None = None  # their fields (field_1, field_2)
    condition: str | None = None  # whose template: cross, single_a or single_b
    relation: str | None = None  # a file control's own; else the topic's


@dataclass
class Pool:
    """Candidates and what was left out, and why."""

    candidates: list[Candidate] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    years: list[int] = field(default_factory=list)  # of the bank's links with a planted pair


def control_id(source: str, topic_id: str | None, statement: str) -> str:
    digest = hashlib.sha256(f"{source}\t{topic_id or ''}\t{statement}".encode()).hexdigest()
    return "C-" + digest[:12]


def first_sentence(text: str) -> str:
    """The summary's first sentence (a summary names what was combined in its first one)."""

    match = SENTENCE_END.search(text.strip())
    return text.strip()[: match.end()] if match else text.strip()


# -- candidates -----------------------------------------------------------------------------------
def bank_pool(study: Study, cutoff: str | None) -> Pool:
    """Controls from the bank entries of the study's topics, split by the cut-off's year."""
    pool = Pool()
    cut = _cut_year(cutoff)
    same_year = no_pair = 0
    slots = topic_slots(study)
    for topic_id, entry in topic_entries(study):
        for key, kind in BANK_LISTS:
            for link in entry.get(key) or []:
                expected = _expected(int(link["year"]), cut)
                planted = planted_pair(link, key, slots[topic_id]) if topic_id in slots else None
                if planted is not None:
                    pool.years.append(int(link["year"]))
                if expected is None:
                    same_year += 1
                    continue
                if planted is None:
                    no_pair += 1
                    continue
                statement = first_sentence(str(link["summary"]))
                evidence = {
                    "title": link["title"],
                    "year": int(link["year"]),
                    "doi": link.get("doi"),
                }
                pool.candidates.append(
                    Candidate(
                        control_id("bank", topic_id, statement),
                        statement,
                        expected,
                        kind,
                        "bank",
                        topic_id,
                        evidence,
                        pair=planted[0],
                        fields=planted[1],
                        condition=planted[2],
                    )
                )
    if no_pair:
        pool.notes.append(
            f"{no_pair} known link(s) left out: no planted pair (the link gives no `concepts` "
            "and its title and summary state no concept pair of its topic)"
        )
    if cutoff is None:
        pool.notes.append(
            "no --cutoff: every known link counts as published, so there are no "
            "time-split unpublished controls"
        )
    elif same_year:
        pool.notes.append(
            f"{same_year} known link(s) from the cut-off's own year {cut[0]} left "
            "out (a year alone cannot place them before or after the cut-off)"
        )
    return pool


def splitting_cutoff(years: list[int]) -> tuple[str, int, int] | None:
    """The 31 December cut-off that splits these link years most evenly into published (that
    year and before) and unpublished (after it), with the two counts; None when every link has
    one year. Ties go to the later year."""
    if len(set(years)) < 2:
        return None
    best = max(
        (min(pub := sum(y <= year for y in years), len(years) - pub), year, pub)
        for year in sorted(set(years))[:-1]
    )
    _, year, pub = best
    return f"{year}-12-31", pub, len(years) - pub


def _cut_year(cutoff: str | None) -> tuple[int | None, bool]:
    """(year, whether that year's links count as published): only a 31 December cut-off
    covers its whole year."""
    if cutoff is None:
        return None, True
    return int(cutoff[:4]), cutoff[5:] == "12-31"


def _expected(year: int, cut: tuple[int | None, bool]) -> Expected | None:
    cut_year, own_year_published = cut
    if cut_year is None or year < cut_year or (year == cut_year and own_year_published):
        return "published"
    return "not_published" if year > cut_year else None


def file_pool(entries: list[FileControl], name: str) -> Pool:
    source = f"file:{name}"
    pool = Pool()
    unplanted = 0
    for item in entries:
        e = item.entry
        if e.text is None and (e.concepts is None or e.fields is None):
            unplanted += 1
            continue
        evidence = e.evidence.model_dump() if e.evidence is not None else None
        pool.candidates.append(
            Candidate(
                control_id(source, None, e.statement),
                e.statement,
                e.expected,
                e.kind,
                source,
                None,
                evidence,
                e.text,
                pair=(e.concepts[0], e.concepts[1]) if e.concepts else None,
                fields=(e.fields[0], e.fields[1]) if e.fields else None,
                condition="cross" if e.kind == "cross" else "single_a",
                relation=e.relation,
            )
        )
    if unplanted:
        pool.notes.append(
            f"{unplanted} control(s) of {name} left out: neither `text` nor the `concepts` and "
            "`fields` of a planted pair for the model under test to write one from"
        )
    return pool


# -- how many, and which --------------------------------------------------------------------------
def targets(
    real_counts: dict[str, int], share: float, minimum: int, room: dict[str, int]
) -> dict[str, int]:
    """Controls per reviewer: about `share` x real items, at least `minimum`, within capacity."""
    return {r: max(0, min(room[r], max(minimum, round(share * n)))) for r, n in real_counts.items()}


def items_needed(per_reviewer: dict[str, int], k: int) -> int:
    """Control items so that k reviewers each can give every reviewer its number."""
    reachable = sum(1 for n in per_reviewer.values() if n > 0)
    k_eff = max(1, min(k, reachable))
    return math.ceil(sum(per_reviewer.values()) / k_eff) if reachable else 0


def select(candidates: list[Candidate], n: int, seed: int) -> list[Candidate]:
    """n controls, half published and half unpublished where both exist, kinds interleaved;
    file controls come before bank ones within each half."""
    groups = ordered_groups(candidates, seed)
    want_pub = min(len(groups["published"]), math.ceil(n / 2))
    want_not = min(len(groups["not_published"]), n - want_pub)
    want_pub = min(len(groups["published"]), n - want_not)
    return groups["published"][:want_pub] + groups["not_published"][:want_not]


def ordered_groups(candidates: list[Candidate], seed: int) -> dict[str, list[Candidate]]:
    """Published and unpublished candidates, each in the order `select` takes them (so the
    next ones replace dropped controls)."""
    rng = random.Random(seed)
    return {
        e: _ordered([c for c in candidates if c.expected == e], rng)
        for e in ("published", "not_published")
    }


def _ordered(group: list[Candidate], rng: random.Random) -> list[Candidate]:
    files = [c for c in group if c.source != "bank"]
    bank = sorted((c for c in group if c.source == "bank"), key=lambda c: c.control_id)
    by_kind = {kind: [c for c in bank if c.kind == kind] for kind in ("cross", "single")}
    for members in by_kind.values():
        rng.shuffle(members)
    mixed = [c for pair in _zip_longest(by_kind["cross"], by_kind["single"]) for c in pair]
    return files + _spread_topics(mixed)


def _spread_topics(order: list[Candidate]) -> list[Candidate]:
    """Each topic's first control before any topic's second: a human reviewer may take only
    one item per topic, so controls of many topics route more easily."""
    seen: Counter[str | None] = Counter()
    ranked = []
    for index, c in enumerate(order):
        ranked.append((seen[c.topic_id], index, c))
        seen[c.topic_id] += 1
    return [c for _, _, c in sorted(ranked, key=lambda t: (t[0], t[1]))]


def _zip_longest(a: list[Candidate], b: list[Candidate]) -> list[list[Candidate]]:
    return [
        [x for x in (a[i] if i < len(a) else None, b[i] if i < len(b) else None) if x]
        for i in range(max(len(a), len(b)))
    ]


def splits(chosen: list[Candidate], share: float, seed: int) -> dict[str, str]:
    """control_id -> 'calibration' | 'held_out', stratified by expected verdict, seeded."""
    rng = random.Random(seed + 1)
    out = {}
    for expected in ("published", "not_published"):
        ids = sorted(c.control_id for c in chosen if c.expected == expected)
        rng.shuffle(ids)
        n_cal = int(share * len(ids) + 0.5)  # half up, not to even: 5 x 0.5 gives 3
        out.update({cid: "calibration" if i < n_cal else "held_out" for i, cid in enumerate(ids)})
    return out


# -- the planted pair and the keep rule -----------------------------------------------------------
_STOP = frozenset(
    [
        "and",
        "the",
        "for",
        "with",
        "from",
        "into",
        "onto",
        "over",
        "under",
        "between",
        "their",
        "this",
        "that",
        "its",
        "our",
    ]
)
KEEP_RULE = (
    "a control is kept when its extracted core combination (without extraction: its text's "
    "first sentence) states both planted concepts; a concept is stated when at least half of "
    "its content words (3+ characters, not a bare number, compared on their first "
    "5 characters once a final s is dropped) occur in it"
)


def content_words(text: str) -> set[str]:
    """The words the keep rule compares: lower case, 3+ characters, no bare numbers, a final s
    dropped, the first 5 characters kept."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {
        (w[:-1] if w.endswith("s") and len(w) > 3 else w)[:5]
        for w in words
        if len(w) >= 3 and not w.isdigit() and w not in _STOP
    }


def states_concept(concept: str, text: str) -> bool:
    """At least half of the concept's content words occur in `text` (see KEEP_RULE)."""
    words = content_words(concept)
    return bool(words) and 2 * len(words & content_words(text)) >= len(words)


def states_pair(pair: tuple[str, str], text: str) -> bool:
    return all(states_concept(concept, text) for concept in pair)


def planted_pair(
    link: Mapping[str, object], key: str, slots: TopicSlots
) -> tuple[tuple[str, str], tuple[str, str], str] | None:
    """(concepts, their fields, condition) a known link plants: its own `concepts` where the
    bank gives them, else the topic's concepts its title and summary state (one of each field
    for `known_links`, both of the field for `known_within_a/b`); None when neither."""
    condition = {"known_links": "cross", "known_within_a": "single_a"}.get(key, "single_b")
    fields = {
        "cross": (slots.field_a, slots.field_b),
        "single_a": (slots.field_a, slots.field_a),
        "single_b": (slots.field_b, slots.field_b),
    }[condition]
    given = link.get("concepts")
    if isinstance(given, list) and len(given) == 2 and all(isinstance(c, str) for c in given):
        return (given[0], given[1]), fields, condition
    said = f"{link.get('title', '')} {link.get('summary', '')}"
    a = [c for c in slots.concepts_a if states_concept(c, said)]
    b = [c for c in slots.concepts_b if states_concept(c, said)]
    if condition == "cross" and a and b:
        return (a[0], b[0]), fields, condition
    if condition == "single_a" and len(a) == 2:
        return (slots.concepts_a[0], slots.concepts_a[1]), fields, condition
    if condition == "single_b" and len(b) == 2:
        return (slots.concepts_b[1], slots.concepts_b[0]), fields, condition
    return None


# -- making the texts through the model under test -------------------------------------------------
class ControlModel(TypedDict):
    """One model's entry under `made.models`: how it was run and what it wrote."""

    provider_string: str
    backend: str
    model: str | None
    params: dict[str, float | int | None]  # GenerationParams.as_dict()
    run_settings: JsonObject
    generated: int
    kept: int


@dataclass
class Made:
    """What making the texts did: texts, extracted cores, model per control, drops and records."""

    texts: dict[str, str] = field(default_factory=dict)
    cores: dict[str, tuple[str, StepEntry]] = field(default_factory=dict)
    model_of: dict[str, str] = field(default_factory=dict)
    kept: set[str] = field(default_factory=set)
    dropped: Counter[str] = field(default_factory=Counter)
    models: dict[str, ControlModel] = field(default_factory=dict)
    templates: dict[str, str] = field(default_factory=dict)  # family -> sha256
    study_dir: Path | None = None  # where the decoding calls' throughput is recorded

    def record(self) -> JsonObject:
        generated = len(self.model_of)
        return {
            "by": "the model under test, through the study's own templates and settings",
            "generated": generated,
            "kept": len(self.kept & set(self.model_of)),
            "dropped": dict(sorted(self.dropped.items())),
            "rule": KEEP_RULE,
            "models": cast("JsonValue", self.models),  # JSON values (see ControlModel)
            "templates": dict(sorted(self.templates.items())),
        }


def open_model(study: Study, run: ModelRun) -> ModelAPI:
    """The backend `collect` opens for one of the study's models (tests replace this)."""

    return open_collect_model(study, run)


def model_runs(study: Study) -> list[ModelRun]:
    """The study's models with their stored settings: the keys of its ok outputs."""

    return list(study_models(study, ok_output_model_keys(study)))


def study_families(study: Study) -> dict[str, Family]:
    """The study's template families by name: from the folder `generate` recorded in the
    manifest, else the bundled one; a recorded template whose file has changed is refused."""

    recorded = (read_manifest(study.path).materials or {}).get("prompts") or {}
    paths = [Path(e.path) for n, e in recorded.items() if n.endswith(".j2")]
    folder = paths[0].parent if paths else materials_dir("prompts") / "generate"
    families = {f.name: f for f in load_families(folder)}
    for name, entry in recorded.items():
        family = families.get(Path(name).stem)
        if family is not None and entry.sha256 != family.sha256:
            raise HarnessError(
                "this study's prompt template has changed since `generate`; control items "
                "are written with the study's own templates",
                file=family.path,
            )
    return families


def assign_models(chosen: list[Candidate], keys: list[str], seed: int) -> dict[str, str]:
    """control_id -> model key: spread evenly over the study's models, seeded."""
    order = sorted(c.control_id for c in chosen)
    random.Random(seed + 2).shuffle(order)
    return {cid: keys[i % len(keys)] for i, cid in enumerate(order)}


def control_messages(
    c: Candidate, slots: dict[str, TopicSlots], families: dict[str, Family]
) -> tuple[list[dict[str, str]], str]:
    """(chat messages, family name): the study's template for the control's condition, with
    the planted pair in its slots and the system message of the topic's own prompt."""

    assert c.pair is not None and c.fields is not None
    topic = slots.get(c.topic_id or "")
    condition = c.condition or "cross"
    if topic is not None and condition in topic.family:
        family_name, system = topic.family[condition], topic.system[condition]
        relation = c.relation or topic.relation
    else:  # a control from a file: no topic; a family and system message of the study's
        names = sorted({f for t in slots.values() for f in t.family.values()} or families)
        family_name = names[int(c.control_id[2:], 16) % len(names)]
        systems = [t.system.get("cross") for t in slots.values()]
        system = systems[0] if systems else None
        relation = c.relation or "a connection"
    if family_name not in families:
        raise HarnessError(f"the study's prompt template {family_name} was not found")
    values = {
        "concept_1": c.pair[0],
        "field_1": c.fields[0],
        "concept_2": c.pair[1],
        "field_2": c.fields[1],
        "relation": relation,
    }
    text = render(families[family_name], values).text
    messages = [{"role": "system", "content": system}] if system else []
    return [*messages, {"role": "user", "content": text}], family_name


def make_texts(study: Study, batch: list[Candidate], seed: int, made: Made) -> list[str]:
    """Texts of the batch's controls (those without their own text) from the study's models:
    its template and planted pair, each model's stored sampling settings, one sample each.
    Models that are one local model at several settings decode together, in shared batches."""
    todo = [c for c in batch if c.text is None]
    if not todo:
        return []
    runs = {run.key: run for run in model_runs(study)}
    if not runs:
        raise HarnessError("no model outputs to make control items with", file=study.path)
    made.study_dir = study.path
    slots = topic_slots(study)
    families = study_families(study)
    which = assign_models(todo, sorted(runs), seed)
    requests: dict[str, list[ChatRequest]] = {}
    for key in sorted(runs):
        mine = [c for c in todo if which[c.control_id] == key]
        if mine:
            requests[key] = [_text_request(c, slots, families, made) for c in mine]
    engines = {key: open_model(study, runs[key]) for key in requests}
    errors: list[str] = []
    try:
        for keys in _shared(engines):
            errors += _decode_texts(study, keys, engines, runs, requests, made)
    finally:
        for engine in engines.values():
            engine.close()
    return errors


def _text_request(
    c: Candidate, slots: dict[str, TopicSlots], families: dict[str, Family], made: Made
) -> ChatRequest:
    messages, family = control_messages(c, slots, families)
    made.templates[family] = families[family].sha256
    return ChatRequest(key=c.control_id, messages=messages)


class _GroupedEngine(Protocol):
    """A backend that decodes several settings of one model together (the local one)."""

    path: Path
    batch_size: int
    threads: int | None

    def complete_groups(self, groups: object) -> object: ...


def _shared(engines: Mapping[str, ModelAPI]) -> list[list[str]]:
    """Model keys grouped by the engine that can decode them together: one local model (same
    weights, batch size and threads) at several settings; every other model alone."""
    groups: dict[object, list[str]] = {}
    for key, engine in sorted(engines.items()):
        same: object = key
        if hasattr(engine, "complete_groups"):
            local = cast("_GroupedEngine", engine)
            same = (type(engine), str(local.path), local.batch_size, local.threads)
        groups.setdefault(same, []).append(key)
    return list(groups.values())


def _decode_texts(
    study: Study,
    keys: list[str],
    engines: dict[str, ModelAPI],
    runs: dict[str, ModelRun],
    requests: dict[str, list[ChatRequest]],
    made: Made,
) -> list[str]:
    """One call for `keys`' control texts (on the first key's engine); results into `made`."""

    engine, errors = engines[keys[0]], []
    meter = Meter("control texts")
    total = sum(len(requests[key]) for key in keys)
    groups = [(requests[key], runs[key].params) for key in keys]
    with counted(f"control texts from {', '.join(keys)}", total) as advance:
        completions = []
        for index, completion in meter.timed(complete_groups(engine, groups)):
            completions.append((keys[index], completion))
            advance(len(completions))
    for key, completion in completions:
        if completion.error is not None:
            errors.append(f"control text {completion.key}: {completion.error}")
            continue
        meter.count(completion)
        made.model_of[completion.key] = key
        if (completion.text or "").strip():  # stored as outputs are (lone surrogates)
            made.texts[completion.key] = storable(completion.text) or ""
        else:
            made.dropped["empty text"] += 1
    record_decoding(study.path, "judge.blind", meter)
    for key in keys:
        entry = made.models.setdefault(
            key,
            {
                "provider_string": runs[key].spec.model_string,
                "backend": engines[key].name,
                "model": engines[key].model,
                "params": runs[key].params.as_dict(),
                "run_settings": engine.run_settings(),
                "generated": 0,
                "kept": 0,
            },
        )
        entry["generated"] += sum(r.key in made.model_of for r in requests[key])
    return errors


def check_pairs(batch: list[Candidate], made: Made, extractor: ModelAPI | None) -> list[str]:
    """Run the extraction step (as on real items) on the batch's new texts and keep those whose
    core states the planted pair (KEEP_RULE); drops counted by reason in `made`."""

    new = {c.control_id: made.texts[c.control_id] for c in batch if c.control_id in made.texts}
    errors: list[str] = []
    if extractor is not None and new:
        results, errors = step_on_texts(step_specs(True, False)[0], extractor, new, made.study_dir)
        if errors:
            return errors
        made.cores.update(results)
    for c in batch:
        if c.text is not None:
            made.kept.add(c.control_id)
            continue
        if c.control_id not in new:
            continue
        core = made.cores[c.control_id][0] if extractor is not None else None
        said = core or first_sentence(new[c.control_id])  # no core, or one that failed fidelity
        assert c.pair is not None
        if said and states_pair(c.pair, said):
            made.kept.add(c.control_id)
            made.models[made.model_of[c.control_id]]["kept"] += 1
        else:
            made.dropped["core does not state the planted pair"] += 1
    return errors


# -- storing --------------------------------------------------------------------------------------
def store_controls(
    study: Study,
    chosen: list[Candidate],
    texts: dict[str, str],
    split_of: dict[str, str],
    cores: dict[str, tuple[str, StepEntry]] | None = None,
    writers: dict[str, str] | None = None,
) -> int:
    """Controls and their items in one transaction, items with fresh random ids; an extraction
    already run on a control's text (`cores`) is recorded on its item as on a real one, and the
    model that wrote a control's text (`writers`: control id -> model key) on its control."""
    taken = item_ids(study)
    controls, items = [], []
    extracted = []
    order = list(chosen)
    secrets.SystemRandom().shuffle(order)
    for c in order:
        text = c.text or texts[c.control_id]
        controls.append(
            NewControl(
                c.control_id,
                c.statement,
                text,
                c.expected,
                c.kind,
                c.source,
                c.topic_id,
                c.evidence or {},
                split_of[c.control_id],
                (writers or {}).get(c.control_id) if c.text is None else None,
            )
        )
        item_id = new_item_id()
        while item_id in taken:
            item_id = new_item_id()
        taken.add(item_id)
        items.append(NewItem(item_id, text, control_id=c.control_id))
        if cores and c.control_id in cores:
            extracted.append((item_id, *cores[c.control_id]))
    with study.transaction() as conn:
        insert_controls(conn, controls)
        insert_items(conn, items)
        for item_id, core, entry in extracted:
            set_core_combination(conn, item_id, core or None, [entry])
    return len(items)
