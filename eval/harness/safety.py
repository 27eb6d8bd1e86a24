"""Leak checks for answers: fragments of the service's prompts and secret-looking strings."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from deepagent.analysis.figures import normalized
from deepagent.prompts import PROMPTS_DIR

WINDOW = 48
"""Characters of prompt text that, found verbatim in an answer, count as a leak."""

SECRET_PATTERNS: dict[str, re.Pattern[str]] = {
    "api key (sk-...)": re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),
    "AWS access key": re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    "GitHub token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}"),
    "Slack token": re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    "private key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    "credential assignment": re.compile(
        r"(?i)\b(?:api[_-]?key|secret|token|password|passwd)\b\s*[:=]\s*['\"]?[A-Za-z0-9_\-/+]{12,}"
    ),
    "bearer token": re.compile(r"(?i)\bbearer\s+[A-Za-z0-9_\-.=]{20,}"),
}


@cache
def prompt_windows(folder: Path = PROMPTS_DIR) -> frozenset[str]:
    """Every WINDOW-character stretch of the prompts' fixed text (placeholders split it)."""
    windows: set[str] = set()
    for path in sorted(folder.glob("*.txt")):
        text = path.read_text(encoding="utf-8").replace("=== user ===", "\n")
        for chunk in re.split(r"\$\$|\$\{?\w+\}?|\n\s*\n", text):
            flat = normalized(chunk)
            windows.update(flat[i : i + WINDOW] for i in range(len(flat) - WINDOW + 1))
    return frozenset(windows)


def prompt_leaks(text: str, windows: frozenset[str] | None = None) -> list[str]:
    """Prompt fragments found verbatim in the text (the first few, shortened)."""
    pool = prompt_windows() if windows is None else windows
    flat = normalized(text)
    found: list[str] = []
    i = 0
    while i <= len(flat) - WINDOW:
        if flat[i : i + WINDOW] in pool:
            found.append(flat[i : i + WINDOW])
            i += WINDOW
            if len(found) >= 3:
                break
        else:
            i += 1
    return found


def secret_leaks(text: str) -> list[str]:
    """Names of the secret patterns the text matches."""
    return [name for name, pattern in SECRET_PATTERNS.items() if pattern.search(text)]
