"""Defaults of the judge stage in one place."""

from __future__ import annotations

#: Distinct reviewers per item; fewer than 2 only in a pilot study.
DEFAULT_K = 2

#: Prefix and length of item ids: `I-` + 10 base32 characters (50 random bits).
ITEM_PREFIX = "I-"
ITEM_ID_CHARS = 10

#: Prompt templates of the blinded steps (in the bundled `prompts/` folder).
EXTRACT_TEMPLATE = "judge/extract.j2"
NORMALISE_TEMPLATE = "judge/normalise.j2"

#: Generation settings of the steps: greedy, short, so that 180 items run in minutes on 2 CPU cores.
EXTRACT_MAX_TOKENS = 48
NORMALISE_MAX_TOKENS = 64

#: Fidelity of the blinded steps (`blinding.step_fidelity`): a step's text passes when at least
#: this share of its content words is found in the output, it adds no claim of novelty, prior
#: work or an institution, and it repeats no run of FIDELITY_ECHO_WORDS words of its instruction.
FIDELITY_MIN_SUPPORT = 0.6
FIDELITY_ECHO_WORDS = 5
#: Content words are compared by their first letters (combine, combination -> combi).
FIDELITY_STEM_CHARS = 5

#: Reviewer-facing materials, in the order they appear on the Instructions sheet.
JUDGING_FILES = ("instructions.md", "codebook.md", "search-protocol.md")
EXAMPLE_ROSTER = "roster.example.yaml"
DEMO_ROSTER = "roster.demo.yaml"

#: Excel holds at most 32,767 characters in a cell; longer texts continue on further rows.
CELL_LIMIT = 32_767
CHUNK_CHARS = 32_000

#: Databases offered in the Searches drop-down (reviewers may type another).
DATABASES = (
    "Google Scholar",
    "OpenAlex",
    "Scopus",
    "Web of Science",
    "PubMed",
    "arXiv",
    "Semantic Scholar",
    "Crossref",
    "Dimensions",
    "IEEE Xplore",
    "ACM Digital Library",
    "PsycInfo",
    "EconLit",
    "SSRN",
    "bioRxiv",
    "Other",
)

#: Blank input rows on a packet's Searches sheet: this many per item, at least SEARCH_ROWS_MIN.
SEARCH_ROWS_PER_ITEM = 8
SEARCH_ROWS_MIN = 100

#: Leak audit: folds of the grouped cross-validation and bootstrap resamples of the AUC.
LEAK_FOLDS = 5
LEAK_BOOTSTRAP = 2000

#: Time limit (seconds) for the assignment solver.
ROUTING_TIME_LIMIT = 120.0
