"""``/console``: the run console's page and its files (shipped in the package, no CDN, no
build step). The page signs in with an API key and calls the ``/v1`` routes itself, so
these routes need no key; they serve only the files of ``deepagent/console/static``."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse

from deepagent.console.offline_page import static_files

router = APIRouter(include_in_schema=False)

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
"""No inline script or style, nothing from another origin: the console needs neither."""
MEDIA = {".html": "text/html", ".js": "text/javascript", ".css": "text/css"}
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache",
    "Referrer-Policy": "no-referrer",
}


def _file(name: str) -> FileResponse:
    path = static_files().get(name)
    if path is None or path.suffix not in MEDIA:
        raise HTTPException(404, f"no console file {name!r}")
    return FileResponse(path, media_type=f"{MEDIA[path.suffix]}; charset=utf-8", headers=HEADERS)


@router.get("/console")
@router.get("/console/")
async def console_page() -> FileResponse:
    """The console (a single page: the run list and each run at ``#/runs/<id>``)."""
    return _file("index.html")


@router.get("/console/{name}")
async def console_file(name: str) -> FileResponse:
    return _file(name)
