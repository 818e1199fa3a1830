"""Literature-search defaults in one place: endpoints, environment variables, rate limits, limits.

Every remote source reads its secrets and base-URL override from the environment only; the
names are listed here so the documentation and the redaction code share one source of truth.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceDefaults:
    name: str  # short name used on the command line
    database: str  # database name as written in a search record
    base_url: str  # documented public endpoint
    url_env: str  # environment variable that overrides base_url (loopback tests)
    interval_s: float  # minimum spacing between requests (published limit)
    interval_env: str  # environment variable that overrides interval_s
    page_size: int  # results per request (capped by the API)
    max_page_size: int


OPENALEX = SourceDefaults(
    name="openalex",
    database="OpenAlex",
    base_url="https://api.openalex.org",
    url_env="HARNESS_OPENALEX_URL",
    interval_s=0.1,
    interval_env="HARNESS_OPENALEX_INTERVAL",
    page_size=25,
    max_page_size=100,
)
ARXIV = SourceDefaults(
    name="arxiv",
    database="arXiv",
    base_url="https://export.arxiv.org/api",
    url_env="HARNESS_ARXIV_URL",
    interval_s=3.0,
    interval_env="HARNESS_ARXIV_INTERVAL",
    page_size=25,
    max_page_size=2000,
)
SEMANTIC_SCHOLAR = SourceDefaults(
    name="semanticscholar",
    database="Semantic Scholar Academic Graph",
    base_url="https://api.semanticscholar.org/graph/v1",
    url_env="HARNESS_SEMANTICSCHOLAR_URL",
    interval_s=1.0,
    interval_env="HARNESS_SEMANTICSCHOLAR_INTERVAL",
    page_size=25,
    max_page_size=100,
)
CROSSREF = SourceDefaults(
    name="crossref",
    database="Crossref",
    base_url="https://api.crossref.org",
    url_env="HARNESS_CROSSREF_URL",
    interval_s=0.1,
    interval_env="HARNESS_CROSSREF_INTERVAL",
    page_size=25,
    max_page_size=1000,
)

# Secrets: environment variable -> where it travels. Values never reach a record, cache or error.
OPENALEX_KEY_ENV = "OPENALEX_API_KEY"  # query parameter `api_key`
SEMANTIC_SCHOLAR_KEY_ENV = "SEMANTIC_SCHOLAR_API_KEY"  # header `x-api-key`
CROSSREF_MAILTO_ENV = "CROSSREF_MAILTO"  # query parameter `mailto` (polite pool)
#: Crossref allows 5 requests/s in the public pool and 10/s in the polite pool.
CROSSREF_PUBLIC_INTERVAL_S = 0.2

#: Text written in place of a secret value in records and cache files.
REDACTED = "[removed]"

#: Environment variable naming another folder for the literature response cache.
CACHE_ENV = "HARNESS_LITERATURE_CACHE"

# Retries on 429/503 (and connection errors): attempts, first backoff, and the longest wait we
# accept from a Retry-After header before giving up with a clear error.
MAX_RETRIES = 4
BACKOFF_S = 1.0
MAX_RETRY_AFTER_S = 120.0
TIMEOUT_S = 30.0

DEFAULT_LIMIT = 10

# The local corpus: BM25 parameters and dense re-ranking depth.
BM25_K1 = 1.5
BM25_B = 0.75
RERANK_DEPTH = 50
EMBEDDING_MODEL_NAME = "all-MiniLM-L6-v2"
#: torch threads while embedding (small batches; more threads only contend for the cores).
EMBED_THREADS = 1

# Automated reviewers: the match score a best hit must reach for `published` (calibration on
# the demonstration corpus in docs/literature-sources.md).
#: `retrieval`: share of the combination's content terms found in the hit's title or abstract.
LEXICAL_THRESHOLD = 0.6
#: `retrieval-dense`: cosine similarity between the combination and the hit (MiniLM embeddings).
DENSE_THRESHOLD = 0.65
#: `retrieval-hybrid`: the mean of the two scores above, over a deeper list of densely re-ranked
#: hits per query (HYBRID_LIMIT; the others read DEFAULT_LIMIT).
HYBRID_THRESHOLD = 0.625
HYBRID_LIMIT = 25
#: The `llm:MODEL` reviewer: hits shown per query and source, and tokens per reply (one line).
LLM_HITS_SHOWN = 5
LLM_MAX_TOKENS = 48
