"""The console's static files, and the run page as one self-contained HTML file.

The console is plain ES modules (``static/*.js``) served as they are at ``/console``. For
``deepagent view`` the modules are joined into one inline module (each module's
``import ... from "./x.js"`` dropped, its ``export`` keywords removed, dependencies first),
the stylesheet inlined and the :class:`ConsoleView` embedded as JSON, so the file opens
from disk with no server and no network.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from deepagent.console.model import ConsoleView

STATIC_DIR = Path(__file__).with_name("static")
ENTRY = "console.js"
_IMPORT = re.compile(r'^import\s*\{[^}]*\}\s*from\s*"\./([\w-]+\.js)";[ \t]*\n', re.M)
_EXPORT = re.compile(r"^export (?=(?:async )?function|class|const|let)", re.M)


def static_files() -> dict[str, Path]:
    """The files the console serves, by name (no sub-directories)."""
    return {p.name: p for p in sorted(STATIC_DIR.iterdir()) if p.is_file()}


def _read(name: str) -> str:
    return (STATIC_DIR / name).read_text(encoding="utf-8")


def module_order(entry: str = ENTRY) -> list[str]:
    """The console's modules, each after the modules it imports."""
    order: list[str] = []
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if name in order:
            return
        if name in visiting:
            raise ValueError(f"import cycle through {name}")
        visiting.add(name)
        for dep in _IMPORT.findall(_read(name)):
            visit(dep)
        visiting.discard(name)
        order.append(name)

    visit(entry)
    return order


def bundle_js() -> str:
    """Every module in one script (their top-level names must not clash: a clash is a
    SyntaxError when the page loads, which the page test would see)."""
    parts = []
    for name in module_order():
        body = _EXPORT.sub("", _IMPORT.sub("", _read(name)))
        if 'from "' in body or "import(" in body:
            raise ValueError(f"{name}: an import the bundler does not handle")
        parts.append(f"// ---- {name}\n{body}")
    return "\n".join(parts)


def _inline(text: str, tag: str) -> str:
    """Text safe inside ``<tag>``: no closing tag or comment opener can end it early."""
    return re.sub(rf"</(?={tag})", r"<\\/", text, flags=re.I).replace("<!--", "<\\!--")


def _json_in_html(view: ConsoleView) -> str:
    data = view.model_dump_json()
    return data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def offline_html(view: ConsoleView) -> str:
    """The run page of ``view`` as one HTML file: CSS, JS and the view inline."""
    page = _read("index.html")
    title = html.escape(f"DeepAgent run {view.run_id}: {view.question[:80]}")
    css = _inline(_read("console.css"), "style")
    js = _inline(bundle_js(), "script")
    page = page.replace("<title>DeepAgent console</title>", f"<title>{title}</title>")
    page = page.replace(
        '<link rel="stylesheet" href="/console/console.css">', f"<style>\n{css}</style>"
    )
    data = f'<script type="application/json" id="console-view">{_json_in_html(view)}</script>'
    script = f'<script type="module">\n{js}</script>'
    page = page.replace('<script type="module" src="/console/console.js"></script>', data + script)
    if "/console/console" in page:
        raise ValueError("index.html no longer has the links the offline page replaces")
    return page
