"""Text normalisation shared by the local corpus, the match scores and the query builder.

One tokenizer everywhere (lower case, letters and digits, English stop words removed, the
Snowball English stemmer), so that what BM25 indexes and what the `retrieval` reviewer counts
agree.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import Stemmer

_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")

_STOPWORDS = """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    either etc few for from further had has have having he her here hers herself him himself
    his how i if in into is it its itself just may me might more most must my myself no nor
    not now of off on once only or other our ours ourselves out over own per same shall she
    should so some such than that the their theirs them themselves then there these they
    this those through thus to too under until up upon us using use used very via was we
    were what when where which while who whom why will with within without would yet you
    your yours yourself yourselves
"""
STOPWORDS = frozenset(_STOPWORDS.split())

# Snowball (Porter2) English through PyStemmer. A stemmer object must not be shared between
# threads, so each thread makes its own.
_LOCAL = threading.local()


def _stemmer() -> Stemmer.Stemmer:
    stemmer = getattr(_LOCAL, "stemmer", None)
    if stemmer is None:
        import Stemmer  # a C extension: loads on the first stem, not with `import harness`

        stemmer = _LOCAL.stemmer = Stemmer.Stemmer("english")
    return stemmer


def fold(text: str) -> str:
    """Lower case without accents (so "Lévy" and "Levy" match)."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


@lru_cache(maxsize=500_000)
def stem(word: str) -> str:
    """The Snowball English stem of a folded word ("diseases" and "disease" -> "diseas")."""
    stemmed: str = _stemmer().stemWord(word)  # PyStemmer ships no type information
    return stemmed


def words(text: str) -> list[str]:
    """Content words of a text in order (folded, hyphenated words split, stop words dropped)."""
    out: list[str] = []
    for token in _WORD.findall(fold(text)):
        parts = token.replace("'", "").split("-") if "-" in token or "'" in token else (token,)
        for part in parts:
            if part and part not in STOPWORDS and (len(part) > 1 or part.isdigit()):
                out.append(part)
    return out


def tokenize(text: str) -> list[str]:
    """Stemmed content words: the terms BM25 indexes and match scores count."""
    return [stem(w) for w in words(text)]  # the per-word cache beats stemWords on corpora


def normalise_query(query: str) -> str:
    """Whitespace collapsed and case folded: the form a deduplication key is built from."""
    return " ".join(fold(query).split())


# Words that frame a stated combination ("Combines X with Y to study Z") rather than name
# what is combined; left out of queries and match scores.
_FRAMING = """aim aims approach combination combine combined combines combining examine examines
    explore explores idea investigate investigates novel new propose proposed proposes purpose
    research study studies"""
FRAMING = frozenset(_FRAMING.split())


def keyword_query(text: str, max_terms: int = 12) -> str:
    """A keyword query from free text: distinct content words in order, at most `max_terms`."""
    seen: set[str] = set()
    terms: list[str] = []
    for word in words(text):
        key = stem(word)
        if key not in seen and not word.isdigit() and word not in FRAMING:
            seen.add(key)
            terms.append(word)
        if len(terms) == max_terms:
            break
    return " ".join(terms)
