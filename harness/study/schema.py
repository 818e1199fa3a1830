"""SQLite schema of the study store. One row per unit of work, keyed by stable ids.

Bump SCHEMA_VERSION whenever a released schema changes and add the step that moves a store of the
previous version forward to `harness/study/migrations.py`; `Study.open` refuses newer versions.
"""

SCHEMA_VERSION = 9

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- topics: one row per topic of the study, copied from the bank at generate time
CREATE TABLE IF NOT EXISTS topics (
    topic_id           TEXT PRIMARY KEY,
    field_a            TEXT NOT NULL,
    field_a_id         INTEGER NOT NULL,
    domain_a           TEXT NOT NULL,
    field_b            TEXT NOT NULL,
    field_b_id         INTEGER NOT NULL,
    domain_b           TEXT NOT NULL,
    concepts_a         TEXT NOT NULL,   -- JSON list of 2 strings
    concepts_b         TEXT NOT NULL,   -- JSON list of 2 strings
    relation           TEXT NOT NULL,
    taxonomy_distance  INTEGER NOT NULL, -- 0 same subfield, 1 same field, 2 same domain, 3 other
    embedding_distance REAL,             -- cosine distance between field descriptions
    data               TEXT NOT NULL     -- JSON of the whole bank entry (known_links included)
);

-- prompts: one rendered prompt per topic and condition
CREATE TABLE IF NOT EXISTS prompts (
    prompt_id   TEXT PRIMARY KEY,
    topic_id    TEXT NOT NULL REFERENCES topics(topic_id),
    condition   TEXT NOT NULL CHECK (condition IN ('single_a', 'single_b', 'cross')),
    family      TEXT NOT NULL,           -- paraphrase family (template file stem)
    template_sha256 TEXT NOT NULL,
    system      TEXT,                    -- system message, if the family has one
    text        TEXT NOT NULL,           -- user message
    n_tokens    INTEGER NOT NULL,        -- tokens of `text` with the embedded model's tokenizer
    spans       TEXT NOT NULL,           -- JSON {slot: [start, end]} character spans in `text`
    UNIQUE (topic_id, condition)
);

-- outputs: one completion per prompt, model and sample (failed attempts keep status='failed')
CREATE TABLE IF NOT EXISTS outputs (
    output_id          TEXT PRIMARY KEY,
    prompt_id          TEXT NOT NULL REFERENCES prompts(prompt_id),
    sample             INTEGER NOT NULL,
    status             TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    backend            TEXT NOT NULL,     -- 'local' or 'openai' (the wire format)
    model              TEXT NOT NULL,     -- as requested
    model_key          TEXT NOT NULL,     -- provider string, e.g. 'openai/gpt-4o-mini', 'local'
    model_reported     TEXT,              -- as reported by the server / loaded config
    system_fingerprint TEXT,
    params             TEXT NOT NULL,     -- JSON: temperature, top_p, max_tokens, seed, ...
    text               TEXT,
    finish_reason      TEXT,
    prompt_tokens      INTEGER,
    completion_tokens  INTEGER,
    cost_usd           REAL,
    latency_s          REAL,
    attempts           INTEGER NOT NULL DEFAULT 1,
    error              TEXT,
    started_at         TEXT NOT NULL,     -- UTC ISO 8601
    finished_at        TEXT NOT NULL,
    UNIQUE (prompt_id, model_key, sample)
);

-- removed_outputs: the outputs of a model removed from the study before blinding (`harness
-- collect --remove`), kept aside as they were stored; never blinded, reviewed or analysed. The
-- manifest's collect.removed entry of the same removed_at says how many and why.
CREATE TABLE IF NOT EXISTS removed_outputs (
    removed_at         TEXT NOT NULL,     -- UTC ISO 8601, one removal
    output_id          TEXT NOT NULL,     -- the columns of `outputs`, as they were
    prompt_id          TEXT NOT NULL,
    sample             INTEGER NOT NULL,
    status             TEXT NOT NULL,
    backend            TEXT NOT NULL,
    model              TEXT NOT NULL,
    model_key          TEXT NOT NULL,
    model_reported     TEXT,
    system_fingerprint TEXT,
    params             TEXT NOT NULL,
    text               TEXT,
    finish_reason      TEXT,
    prompt_tokens      INTEGER,
    completion_tokens  INTEGER,
    cost_usd           REAL,
    latency_s          REAL,
    attempts           INTEGER NOT NULL,
    error              TEXT,
    started_at         TEXT NOT NULL,
    finished_at        TEXT NOT NULL,
    PRIMARY KEY (removed_at, output_id)
);

-- reviewers: the roster used for routing
CREATE TABLE IF NOT EXISTS reviewers (
    reviewer_id TEXT PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('human', 'automated')),
    method      TEXT,                    -- automated: 'retrieval' or 'llm:MODEL'
    expertise   TEXT NOT NULL,           -- JSON list of field names
    capacity    INTEGER NOT NULL,
    role        TEXT NOT NULL DEFAULT 'primary' CHECK (role IN ('primary', 'adjudicator'))
);

-- controls: combinations whose answer is known (published before the cut-off or not); they enter
-- the blinded stream as items, indistinguishable from real ones, and measure each reviewer
CREATE TABLE IF NOT EXISTS controls (
    control_id  TEXT PRIMARY KEY,        -- stable, never shown to reviewers
    statement   TEXT NOT NULL,           -- the one-sentence core combination
    text        TEXT NOT NULL,           -- the short text shown (before style normalisation)
    expected    TEXT NOT NULL CHECK (expected IN ('published', 'not_published')),
    kind        TEXT NOT NULL CHECK (kind IN ('cross', 'single')),
    source      TEXT NOT NULL,           -- 'bank' or 'file:NAME'
    topic_id    TEXT,                    -- the bank topic it came from, if any
    evidence    TEXT NOT NULL,           -- JSON: title, year, doi
    split       TEXT CHECK (split IN ('calibration', 'held_out')),
    writer_model TEXT                    -- the study's model (key) that wrote `text`; NULL when
                                         -- the text came with its controls file
);

-- items: the blinded unit reviewers see; item_id is random and carries no information. An item
-- shows either a model output or a control, never both.
CREATE TABLE IF NOT EXISTS items (
    item_id          TEXT PRIMARY KEY,
    output_id        TEXT UNIQUE REFERENCES outputs(output_id),
    control_id       TEXT UNIQUE REFERENCES controls(control_id),
    original_text    TEXT NOT NULL,
    core_combination TEXT,
    display_text     TEXT NOT NULL,      -- normalised text when normalisation ran, else original
    steps            TEXT NOT NULL,      -- JSON provenance of extraction / normalisation
    CHECK ((output_id IS NULL) <> (control_id IS NULL))
);

-- assignments: item given to a reviewer, in the reviewer's randomised order
CREATE TABLE IF NOT EXISTS assignments (
    item_id     TEXT NOT NULL REFERENCES items(item_id),
    reviewer_id TEXT NOT NULL REFERENCES reviewers(reviewer_id),
    position    INTEGER NOT NULL,
    round       INTEGER NOT NULL DEFAULT 1,  -- 2, 3, ...: adjudicators added where theirs disagree
    PRIMARY KEY (item_id, reviewer_id)
);

-- imports: every reviewer file read in, with its hash
CREATE TABLE IF NOT EXISTS imports (
    import_id   TEXT PRIMARY KEY,
    reviewer_id TEXT NOT NULL,
    file_name   TEXT NOT NULL,
    file_sha256 TEXT NOT NULL,
    imported_at TEXT NOT NULL,
    replaced_by TEXT,                    -- import_id that superseded this one (--replace)
    n_reviews   INTEGER NOT NULL,
    n_searches  INTEGER NOT NULL,
    round       INTEGER NOT NULL DEFAULT 1   -- the packet's round (one import per round in force)
);

-- reviews: one verdict per item and reviewer
CREATE TABLE IF NOT EXISTS reviews (
    item_id     TEXT NOT NULL REFERENCES items(item_id),
    reviewer_id TEXT NOT NULL REFERENCES reviewers(reviewer_id),
    verdict     TEXT NOT NULL CHECK (verdict IN ('published', 'not_published', 'unsure')),
    confidence  INTEGER,
    prior_work  TEXT,
    notes       TEXT,
    source      TEXT NOT NULL,           -- 'xlsx', 'csv' or 'automated'
    import_id   TEXT REFERENCES imports(import_id),
    source_sha256 TEXT,
    created_at  TEXT NOT NULL,
    after_unblinding INTEGER NOT NULL DEFAULT 0, -- 1: stored after `analyze` unblinded the study;
                                                 -- listed apart, never in the analysis
    PRIMARY KEY (item_id, reviewer_id)
);

-- searches: one literature query as run (PRISMA-S), from humans and automated reviewers alike
CREATE TABLE IF NOT EXISTS searches (
    search_id    TEXT PRIMARY KEY,
    item_id      TEXT REFERENCES items(item_id),
    reviewer_id  TEXT,
    database     TEXT NOT NULL,
    interface    TEXT,
    query        TEXT NOT NULL,          -- exact query as run
    parameters   TEXT,                   -- JSON of request parameters as sent, secrets removed
    filters      TEXT,                   -- JSON: date cut-off, limits
    run_at       TEXT NOT NULL,          -- UTC ISO 8601
    total_hits   INTEGER,
    hits         TEXT NOT NULL,          -- JSON list: id, doi, title, year, score
    relevant_ids TEXT,                   -- JSON list of ids the reviewer marked relevant
    dedup_key    TEXT NOT NULL,
    source       TEXT NOT NULL,          -- 'xlsx', 'csv' or 'automated'
    import_id    TEXT REFERENCES imports(import_id)
);

-- calibrations: the decision rule of each automated reviewer (threshold, and how it was chosen on
-- the calibration split of controls); locked once the reviewer has reviewed any other item
CREATE TABLE IF NOT EXISTS calibrations (
    reviewer_id       TEXT PRIMARY KEY REFERENCES reviewers(reviewer_id),
    method            TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('calibrated', 'uncalibrated', 'fixed')),
    threshold         REAL NOT NULL,     -- the decision rule's threshold in use
    default_threshold REAL NOT NULL,     -- the documented default for the method
    youden            REAL,              -- J at `threshold` on the calibration split
    sensitivity       REAL,
    specificity       REAL,
    youden_default    REAL,              -- J at the default on the same controls
    n_published       INTEGER NOT NULL,  -- calibration controls with a coded verdict
    n_not_published   INTEGER NOT NULL,
    unsure            TEXT,              -- the plan's coding of unsure used for J
    scores            TEXT NOT NULL,     -- JSON [[item_id, score or null], ...]
    settings          TEXT NOT NULL,     -- JSON: sources, max_queries, cutoff, backend
    note              TEXT,              -- why a reviewer is uncalibrated
    decided_at        TEXT NOT NULL
);

-- adjudication_sample: the topics drawn (before any review) whose every item adjudicators judge;
-- sealed in the blinding key, never named in a packet
CREATE TABLE IF NOT EXISTS adjudication_sample (
    topic_id    TEXT PRIMARY KEY REFERENCES topics(topic_id),
    stratum     TEXT NOT NULL            -- the topic's domain pair ('A x B'), or 'all'
);

-- geometry: attention measures inside a real model, per prompt, layer and head
CREATE TABLE IF NOT EXISTS geometry (
    prompt_id   TEXT NOT NULL REFERENCES prompts(prompt_id),
    model       TEXT NOT NULL,
    layer       INTEGER NOT NULL,
    head        INTEGER NOT NULL,
    entropy     REAL NOT NULL,           -- bits, last prompt token
    mass        TEXT NOT NULL,           -- JSON {slot: attention mass}
    split_index REAL,                    -- evenness of mass between the two named concepts
    PRIMARY KEY (prompt_id, model, layer, head)
);

CREATE INDEX IF NOT EXISTS outputs_prompt ON outputs(prompt_id);
CREATE INDEX IF NOT EXISTS outputs_model ON outputs(model_key);
CREATE INDEX IF NOT EXISTS prompts_topic ON prompts(topic_id);
CREATE INDEX IF NOT EXISTS reviews_reviewer ON reviews(reviewer_id);
CREATE INDEX IF NOT EXISTS searches_item ON searches(item_id, reviewer_id);
"""
