"""The words of a server's answer that is not the JSON expected (an nginx page, a proxy's error,
plain text): its text with any HTML markup stripped, on one line, shortened.

Error lines quote the server, and an HTML page quoted as it came is mostly markup and styles.
"""

from __future__ import annotations

from html.parser import HTMLParser

#: Longest quote of an answer, in characters.
LIMIT = 120
#: Elements whose text is not what a reader of the page sees.
_HIDDEN = frozenset({"script", "style", "head", "noscript", "template"})


def answer_text(content: bytes | str, limit: int = LIMIT) -> str:
    """The first meaningful text of an answer: HTML stripped to its visible text (the page's
    title when its body shows none), whitespace collapsed, at most `limit` characters."""
    text = content.decode("utf-8", "replace") if isinstance(content, bytes) else content
    if looks_like_html(text):
        text = _visible_text(text)
    return shorten(" ".join(text.split()), limit)


def looks_like_html(text: str) -> bool:
    head = text.lstrip()[:200].lower()
    return head.startswith(("<!doctype html", "<html", "<head", "<body", "<?xml")) or (
        head.startswith("<") and "</" in text
    )


def looks_like_json(content: bytes) -> bool:
    """A body that starts as JSON does (a truncated one is a glitch in transit, not a server
    that speaks something else)."""
    return content.lstrip()[:1] in (b"{", b"[")


def shorten(text: str, limit: int = LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


class _Text(HTMLParser):
    """The visible text of a page and its title, markup, scripts and styles left out."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self._hidden = 0  # depth inside elements whose text is not shown
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _HIDDEN:
            self._hidden += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _HIDDEN and self._hidden:
            self._hidden -= 1

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
        elif not self._hidden:
            self.parts.append(data)


def _visible_text(page: str) -> str:
    parser = _Text()
    try:
        parser.feed(page)
        parser.close()
    except Exception:  # a page too broken to parse is quoted as it came
        return page
    body = " ".join(" ".join(parser.parts).split())
    return body or " ".join(" ".join(parser.title).split())
