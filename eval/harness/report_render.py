"""Markdown in the eval report's HTML page, rendered by markdown-it (CommonMark plus
tables), never by string replaces.

Raw HTML in the input is escaped (``html: False``). Images and links are not rendered
(their text stays as written), so an answer can neither pull anything from the network
into the self-contained page nor link out of it.
"""

from __future__ import annotations

from markdown_it import MarkdownIt

EXCERPT_CHARS = 500


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False})
    md.enable("table")
    md.disable(["image", "link", "autolink"])
    return md


_MD = _parser()


def render_markdown(text: str) -> str:
    """Block markdown (an answer, a list) as HTML, every raw tag escaped."""
    return str(_MD.render(text))


def render_inline(text: str) -> str:
    """One line of markdown (emphasis, code) as inline HTML, every raw tag escaped."""
    return str(_MD.renderInline(text))


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> tuple[str, bool]:
    """(the beginning of ``text`` within ``limit`` characters, whether it was cut). Cut at
    a line end, so a table keeps whole rows; a first line longer than the limit is cut
    inside it."""
    text = text.strip()
    if len(text) <= limit:
        return text, False
    kept: list[str] = []
    size = 0
    for line in text.splitlines():
        if size + len(line) > limit:
            break
        kept.append(line)
        size += len(line) + 1
    if not kept:
        return text[:limit].rstrip() + " …", True
    return "\n".join(kept).rstrip() + "\n\n…", True


def one_line(text: str, limit: int) -> str:
    """``text`` on one line (whitespace runs collapsed), at most ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
