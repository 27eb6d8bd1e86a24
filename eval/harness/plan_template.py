"""A run's executed tool calls turned back into a case plan (an Action Tree template).

The RunRecord keeps each action's resolved arguments and dependencies; the stored run
keeps each action's data. The template writes what a case plan would have written:

- a literal equal to a context parameter becomes ``"{{params.X}}"`` (only the obvious
  ones: ids, months, names, and ``top_n`` / ``count`` with their value as fallback);
- a value read from a dependency's data becomes ``{"$ref": dep, "path": ...}``;
- the copies of one action (a fan-out) become one action with ``for_each`` over the list
  in the dependency's data that yields their varying arguments, bound with ``$item``.

Every action is checked by binding it again (``core.templates``, ``execution.refs``) with the run's
parameters and data: one that does not give back the recorded arguments keeps its
literal arguments instead, so a template never says more than the run showed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from deepagent.core.schema import JSON, ActionSpec
from deepagent.core.templates import BindingError, fill_template, search
from deepagent.execution.records import ActionRecord
from deepagent.execution.refs import for_each_items, resolve_refs
from deepagent.record import RunRecord

PREFERRED = (
    "category.id", "page_product.id", "page_category.id", "month", "time.start_month",
    "time.end_month", "top_n", "count", "merchant_id", "main_category.id", "latest_month",
    "data_coverage.first", "data_coverage.last",
)  # fmt: skip
"""When several parameters hold the same value, the first of these names it."""
NOT_PARAMS = {"question", "user_id", "source", "question_time", "page"}
OPTIONAL = {"top_n", "count"}
"""Parameters a question may leave out: their placeholder keeps the value as fallback."""
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CASE_TAG = re.compile(r"^c[0-9a-f]{5}_")  # deepagent/planning/case_plan.py case_tag


@dataclass
class Executed:
    """One action of the run: its copies' arguments (item order) and its usable data."""

    id: str
    tool: str
    depends_on: list[str]
    copies: list[dict[str, JSON]]
    data: JSON
    fan_out: bool
    has_data: bool = field(default=False)


# --- the run's actions -----------------------------------------------------------------


def executed_actions(record: RunRecord) -> list[Executed]:
    """Tool actions with usable data, in run order; ids renamed (the offline planner's
    case tag dropped, repeats numbered); dependencies on dropped actions drop them too."""
    out: list[Executed] = []
    latest: dict[str, str] = {}
    used: set[str] = set()
    for rnd in record.rounds:
        groups = _groups(rnd.actions)
        names = {old: _fresh(old, used) for old in groups}
        for old, copies in groups.items():
            deps = [names.get(d) or latest.get(d) for d in copies[0].depends_on]
            if None in deps or not any(c.status == "ok" for c in copies):
                continue
            assert copies[0].tool is not None
            out.append(_executed(names[old], copies[0].tool, [d for d in deps if d], copies))
        latest.update({old: names[old] for old in groups if any(e.id == names[old] for e in out)})
    return out


def _groups(actions: Sequence[ActionRecord]) -> dict[str, list[ActionRecord]]:
    groups: dict[str, list[ActionRecord]] = {}
    for a in actions:
        if a.kind == "tool" and a.tool and a.status != "skipped":
            groups.setdefault(a.id, []).append(a)
    return {k: sorted(v, key=lambda a: a.item_index or 0) for k, v in groups.items()}


def _fresh(old: str, used: set[str]) -> str:
    base = _CASE_TAG.sub("", old) or old
    name, n = base, 1
    while name in used:
        n += 1
        name = f"{base}_{n}"
    used.add(name)
    return name


def _executed(new_id: str, tool: str, deps: list[str], copies: list[ActionRecord]) -> Executed:
    fan_out = copies[0].item_index is not None
    usable = [c.data for c in copies if c.status == "ok"]
    data: JSON = usable if fan_out else usable[0]
    return Executed(new_id, tool, deps, [c.args for c in copies], data, fan_out, bool(usable))


# --- parameters ------------------------------------------------------------------------


def _key(value: JSON) -> str:
    return type(value).__name__ + ":" + json.dumps(value, sort_keys=True, ensure_ascii=False)


def _flatten(value: JSON, prefix: str) -> Iterator[tuple[str, JSON]]:
    if isinstance(value, dict):
        for k, v in value.items():
            if _IDENT.match(str(k)):
                yield from _flatten(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:5]):
            yield from _flatten(v, f"{prefix}.{i}")
    else:
        yield prefix, value


def param_index(params: Mapping[str, JSON]) -> dict[str, str]:
    """Value key -> placeholder, for the parameter values a plan may name."""
    flat = [(p, v) for k, v in params.items() if k not in NOT_PARAMS for p, v in _flatten(v, k)]
    ordered = sorted(flat, key=lambda pv: PREFERRED.index(pv[0]) if pv[0] in PREFERRED else 99)
    index: dict[str, str] = {}
    for path, value in ordered:
        if not _obvious(path, value):
            continue
        fallback = f" ?? {json.dumps(value)}" if path in OPTIONAL else ""
        index.setdefault(_key(value), "{{params." + path + fallback + "}}")
    return index


def _obvious(path: str, value: JSON) -> bool:
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, int):
        return abs(value) >= 1000 or path in OPTIONAL
    return isinstance(value, str) and len(value) >= 2


# --- references into a dependency's data ----------------------------------------------


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def find_paths(data: JSON, value: JSON, prefix: str = "", depth: int = 0) -> Iterator[str]:
    """Every JMESPath that selects ``value`` inside ``data`` (depth first)."""
    if _key(data) == _key(value):
        yield prefix or "@"
        return
    if depth > 5:
        return
    if isinstance(data, dict):
        for k, v in data.items():
            if _IDENT.match(str(k)):
                yield from find_paths(v, value, _join(prefix, str(k)), depth + 1)
    elif isinstance(data, list):
        for i, v in enumerate(data[:50]):
            yield from find_paths(v, value, f"{prefix}[{i}]", depth + 1)


def find_path(data: JSON, value: JSON) -> str | None:
    """The path a plan would write for ``value``: one by name (``main_band.id``) before
    one by position (``bands[2].id``). A small integer is only taken by name, from a
    field named like an id (otherwise a 3 could be anything)."""
    paths = list(find_paths(data, value))
    named = [p for p in paths if "[" not in p]
    if isinstance(value, int) and abs(value) < 100:
        return next((p for p in named if p.rsplit(".", 1)[-1].endswith("id")), None)
    return next(iter(named or paths), None)


def _project(path: str, tail: str) -> str:
    if path == "@":
        return f"[].{tail}"
    return f"{path}.{tail}" if path.endswith("[]") else f"{path}[].{tail}"


def list_paths(data: JSON, path: str = "@", depth: int = 0) -> Iterator[tuple[str, list[JSON]]]:
    """(path, list) for every list inside ``data``, flattening lists of lists of objects
    (``[].bands[]``) as JMESPath does."""
    if depth > 4:
        return
    if isinstance(data, dict):
        for k, v in data.items():
            if _IDENT.match(str(k)) and isinstance(v, dict | list):
                yield from list_paths(v, _join("" if path == "@" else path, str(k)), depth + 1)
        return
    if not isinstance(data, list):
        return
    yield path, data
    rows = [d for d in data if isinstance(d, dict)]
    keys = {k for d in rows for k, v in d.items() if isinstance(v, list) and _IDENT.match(k)}
    for k in sorted(keys):
        flat = [x for d in rows for x in (d.get(k) or [])]
        yield from list_paths(flat, _project(path, f"{k}[]"), depth + 1)


def fan_out_source(
    results: Mapping[str, JSON], deps: Sequence[str], varying: Mapping[str, list[JSON]]
) -> tuple[str, str, dict[str, JSON]] | None:
    """(dependency, for_each path, args binding $item) whose list yields the varying
    arguments copy by copy, or None."""
    for dep in deps:
        for path, items in list_paths(results.get(dep)):
            found = _match_items(path, items, varying)
            if found is not None and search(found[0], results[dep]) == _expected(varying, found):
                return dep, found[0], found[1]
    return None


def _match_items(
    path: str, items: list[JSON], varying: Mapping[str, list[JSON]]
) -> tuple[str, dict[str, JSON]] | None:
    n = len(next(iter(varying.values())))
    if len(items) != n:
        return None
    if len(varying) == 1 and all(
        _key(a) == _key(b) for a, b in zip(items, *varying.values(), strict=True)
    ):
        return path, {k: {"$item": "@"} for k in varying}
    fields: dict[str, str] = {}
    for arg, values in varying.items():
        for f in sorted({k for d in items if isinstance(d, dict) for k in d}):
            if _IDENT.match(f) and [_key(d.get(f)) for d in items] == [_key(v) for v in values]:
                fields[arg] = f
                break
    if len(fields) != len(varying):
        return None
    if len(varying) == 1:
        arg, f = next(iter(fields.items()))
        return _project(path, f), {arg: {"$item": "@"}}
    hash_ = "{" + ", ".join(f"{a}: {f}" for a, f in fields.items()) + "}"
    return _project(path, hash_), {a: {"$item": a} for a in fields}


def _expected(varying: Mapping[str, list[JSON]], found: tuple[str, dict[str, JSON]]) -> JSON:
    if all(v == {"$item": "@"} for v in found[1].values()):
        return next(iter(varying.values()))
    n = len(next(iter(varying.values())))
    return [{a: varying[a][i] for a in found[1]} for i in range(n)]


# --- the template ----------------------------------------------------------------------


@dataclass(frozen=True)
class Scope:
    """What a template is built from: the run's parameters and the data so far."""

    params: Mapping[str, JSON]
    question: str
    index: Mapping[str, str]
    results: dict[str, JSON]


def template_value(value: JSON, scope: Scope, deps: Sequence[str], arg: str = "") -> JSON:
    """A parameter placeholder, a $ref into a dependency's data, or the literal."""
    if isinstance(value, dict):
        return {k: template_value(v, scope, deps, k) for k, v in value.items()}
    if not isinstance(value, list):
        placeholder = scope.index.get(_key(value))
        if placeholder is not None:
            return placeholder
    ref = _ref_to(value, scope.results, deps) if _refable(value, arg) else None
    if ref is not None:
        return ref
    if isinstance(value, list):
        return [template_value(v, scope, deps, arg) for v in value]
    return value


def _refable(value: JSON, arg: str) -> bool:
    """Values worth looking for in a dependency's data: ids, id lists, dated strings; a
    small integer only for an argument named like an id (``price_band_id``)."""
    if isinstance(value, list):
        return bool(value) and all(_refable(v, arg) for v in value)
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) >= 100 or arg.endswith(("id", "ids"))
    return isinstance(value, str) and len(value) >= 2 and any(c.isdigit() for c in value)


def _ref_to(value: JSON, results: Mapping[str, JSON], deps: Sequence[str]) -> JSON:
    for dep in (d for d in deps if d in results):
        if isinstance(value, list):
            found = fan_out_source({dep: results[dep]}, [dep], {"_": value})
            path = found[1] if found is not None else None
        else:
            path = find_path(results[dep], value)
        if path is not None:
            return {"$ref": dep, "path": path}
    return None


def action_templates(ex: Executed, scope: Scope) -> list[dict[str, JSON]]:
    """The action as a template, or its literal calls when the template does not bind
    back to what the run called."""
    spec = _fan_out_template(ex, scope) if ex.fan_out and len(ex.copies) > 1 else None
    if spec is None and len(ex.copies) == 1:
        spec = _spec(ex, template_value(ex.copies[0], scope, ex.depends_on), None)
    if spec is not None and rebinds(spec, scope, ex.copies):
        return [spec]
    return _literal(ex)


def _fan_out_template(ex: Executed, scope: Scope) -> dict[str, JSON] | None:
    keys = list(dict.fromkeys(k for c in ex.copies for k in c))
    varying = {
        k: [c.get(k) for c in ex.copies]
        for k in keys
        if len({_key(c.get(k)) for c in ex.copies}) > 1
    }
    found = fan_out_source(scope.results, ex.depends_on, varying) if varying else None
    if found is None:
        return None
    dep, path, item_args = found
    first = ex.copies[0]
    args = {
        k: item_args[k] if k in item_args else template_value(first[k], scope, ex.depends_on, k)
        for k in keys
    }
    return _spec(ex, args, {"$ref": dep, "path": path})


def _spec(ex: Executed, args: JSON, for_each: JSON) -> dict[str, JSON]:
    spec: dict[str, JSON] = {"id": ex.id, "tool": ex.tool, "args": args}
    if for_each is not None:
        spec["for_each"] = for_each
    implied = ActionSpec.model_validate(spec).depends_on
    extra = [d for d in ex.depends_on if d not in implied]
    if extra:
        spec["depends_on"] = extra
    return spec


def _literal(ex: Executed) -> list[dict[str, JSON]]:
    out: list[dict[str, JSON]] = []
    for i, args in enumerate(ex.copies):
        spec: dict[str, JSON] = {"id": ex.id if i == 0 else f"{ex.id}_{i + 1}", "tool": ex.tool}
        spec["args"] = args
        if ex.depends_on:
            spec["depends_on"] = list(ex.depends_on)
        out.append(spec)
    return out


def rebinds(spec: Mapping[str, JSON], scope: Scope, copies: Sequence[dict[str, JSON]]) -> bool:
    """Whether binding the template with the run's parameters and data gives back the
    recorded arguments of every copy."""
    try:
        action = ActionSpec.model_validate(spec)
        args = fill_template(action.args, scope.params, scope.question)
        if action.for_each is None:
            bound = [resolve_refs(args, scope.results)]
        else:
            items = for_each_items(action, scope.results)
            bound = [resolve_refs(args, scope.results, item) for item in items]
    except (BindingError, ValueError):
        return False
    return [_key(b) for b in bound] == [_key(c) for c in copies]


def plan_of(record: RunRecord) -> list[dict[str, JSON]]:
    """The run's executed tool calls as a case plan (ActionSpec dicts, run order).
    ``record`` must carry each action's data (``StoredRun.hydrated()``)."""
    scope = Scope(record.params, record.question, param_index(record.params), {})
    plan: list[dict[str, JSON]] = []
    for ex in executed_actions(record):
        plan.extend(action_templates(ex, scope))
        if ex.has_data:
            scope.results[ex.id] = ex.data
    return plan
