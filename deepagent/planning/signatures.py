"""Tool signatures as the planner reads them (``name(arg: type = default, ...)``): the
arguments a tool takes, the ones without a default, and the ones that take one of listed
values. The offline planner reads them from its prompt; the service from its tool views."""

from __future__ import annotations

import re

_CHOICE = re.compile(r'^\s*"[^"]*"(?:\s*\|\s*"[^"]*")*\s*$')


def tool_name(signature: str) -> str:
    return signature.split("(", 1)[0]


def _parts(signature: str) -> list[str]:
    inner = signature.split("(", 1)[1].rsplit(")", 1)[0] if "(" in signature else ""
    return [p.strip() for p in re.split(r",\s*(?=\w+:)", inner) if p.strip()]


def required_args(signature: str) -> list[str]:
    """The arguments of a ``name(arg: type = default, ...)`` signature without a default."""
    return [p.split(":", 1)[0] for p in _parts(signature) if "=" not in p]


def all_args(signature: str) -> list[str]:
    return [p.split(":", 1)[0] for p in _parts(signature)]


def arg_choices(signature: str) -> dict[str, list[str]]:
    """The arguments that take one of listed values (``metric: "gmv" | "units" = "gmv"``)."""
    out: dict[str, list[str]] = {}
    for part in _parts(signature):
        name, _, rest = part.partition(":")
        typ = rest.split("=", 1)[0]
        if _CHOICE.match(typ):
            out[name.strip()] = re.findall(r'"([^"]*)"', typ)
    return out
