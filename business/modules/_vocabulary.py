"""The common module's entity names: every category name of the store, in both languages.

The context loader's offline classifier removes these names from a question before it
compares the question with each module's example questions, so that what is asked about
(面霜, air fryers) does not outweigh what is asked (size, price bands, lost buyers).
"""

from __future__ import annotations

import re
import sqlite3
from contextlib import closing

from deepagent.core.settings import Settings

_ZH_PARTS = re.compile(r"[/、&·]+")
_EN_PARTS = re.compile(r"\s*[/,]\s*")


def entity_names(settings: Settings) -> list[str]:
    """Category names split into their parts ('美容护肤/美体/精油' -> 3 names; English at
    '/' and ',' only, so 'Mother & Baby' stays whole instead of masking 'mother').

    Read once when the context loader is created; a missing store yields no names.
    """
    path = settings.data_path
    if not path.exists():
        return []
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        rows = db.execute("SELECT name_zh, name_en FROM categories").fetchall()
    names: set[str] = set()
    for zh, en in rows:
        names.update(p.strip() for p in _ZH_PARTS.split(zh or "") if len(p.strip()) >= 2)
        names.update(p.strip() for p in _EN_PARTS.split(en or "") if len(p.strip()) >= 3)
    return sorted(names)


def subject_names(settings: Settings) -> dict[str, list[str]]:
    """Names a question can refer to a subject by, per subject type: the brands of the
    store's products (the requirements extractor recognises them)."""
    path = settings.data_path
    if not path.exists():
        return {}
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        rows = db.execute("SELECT DISTINCT brand FROM products").fetchall()
    return {"brand": sorted(str(b) for (b,) in rows if b and len(str(b)) >= 2)}
