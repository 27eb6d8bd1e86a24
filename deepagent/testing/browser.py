"""Headless Chromium for page tests: render a URL, keep its DOM after scripts ran, its
console output and a screenshot. Uses Debian's ``chromium`` package (no browser download)."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

_CONSOLE = re.compile(r":CONSOLE(?:\(\d+\))?:?\d*\]\s*(.*)$")
_NAMES = ("chromium", "chromium-browser", "google-chrome")


def chromium_path() -> str | None:
    """The headless browser on this machine, if any."""
    return next((p for p in map(shutil.which, _NAMES) if p), None)


@dataclass(frozen=True)
class Rendered:
    dom: str  # the document after its scripts ran
    console: list[str]  # every console message and uncaught error, in order
    screenshot: Path | None


def render(
    url: str,
    screenshot: Path | None = None,
    *,
    wait_ms: int = 3000,
    size: tuple[int, int] = (1280, 900),
    timeout_s: float = 90.0,
) -> Rendered:
    """Load ``url`` in a fresh headless profile, let scripts run for ``wait_ms`` of virtual
    time, and return the DOM, console lines and (when asked) a PNG screenshot."""
    binary = chromium_path()
    if binary is None:
        raise RuntimeError(
            "no chromium on PATH: page tests need it (`make pytest` installs Debian's"
            " chromium; else apt-get install chromium)"
        )
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        cmd = [
            binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-extensions", "--enable-logging=stderr", "--v=0",
            f"--user-data-dir={profile}", f"--virtual-time-budget={wait_ms}",
            f"--window-size={size[0]},{size[1]}", "--dump-dom",
        ]  # fmt: skip
        if screenshot is not None:
            cmd.append(f"--screenshot={screenshot}")
        done = subprocess.run(
            [*cmd, url], capture_output=True, text=True, timeout=timeout_s, check=False
        )
    console = [m.group(1) for line in done.stderr.splitlines() if (m := _CONSOLE.search(line))]
    shot = screenshot if screenshot is not None and screenshot.exists() else None
    return Rendered(dom=done.stdout, console=console, screenshot=shot)
