"""Job functions for fault tests, imported by real workers (`tests` is on their path)."""

from __future__ import annotations

from typing import Any


async def explode(payload: dict[str, Any]) -> dict[str, Any]:
    raise RuntimeError(f"boom in {payload['run_id']}")
