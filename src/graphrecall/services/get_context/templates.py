"""Context templates: a project's named formats for context blocks, and their language.

A template is text with variables ``%{name param=value ...}``; everything else is copied
as written (``%%`` writes a literal ``%``). The variables, their parameters and the
defaults are documented in docs/context.md. Templates are validated when they are saved,
so rendering never fails on a stored template (one saved before the cost caps below
existed answers 400 naming it until it is updated).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from graphrecall.domain import clock, limits
from graphrecall.domain.errors import BadRequest, NotFound
from graphrecall.domain.ids import check_uuid, new_id
from graphrecall.domain.models import ContextTemplate, Page, PageRequest, Project
from graphrecall.services.container import Services

MAX_TEMPLATE_CHARS = limits.MAX_TEMPLATE_CHARS
MAX_NAME_CHARS = 200
# What one render may cost: each slot is a search and a cross-encoder pass over its limit
# (a 60-slot template of limit 1000 took 2.7 s a call and slowed another tenant 11x).
MAX_SLOTS = limits.MAX_TEMPLATE_SLOTS
MAX_ITEMS = limits.MAX_TEMPLATE_ITEMS
MAX_LIMIT = MAX_ITEMS  # one slot may ask for the whole template's items
# Observations and thread summaries are capped per render whatever the limit says.
DERIVED_CAP = 20
ALIASES = {"facts": "edges", "nodes": "entities"}
DEFAULT_LIMITS = {
    "edges": 20,
    "entities": 10,
    "episodes": 10,
    "observations": 10,
    "thread_summaries": 5,
    "user_summary": 1,
}
PARAMS: dict[str, frozenset[str]] = {
    "edges": frozenset({"limit", "types", "include_attributes"}),
    "entities": frozenset({"limit", "types", "include_attributes"}),
    "episodes": frozenset({"limit"}),
    "observations": frozenset({"limit"}),
    "thread_summaries": frozenset({"limit"}),
    "user_summary": frozenset(),
}
_PARAM = re.compile(r"\s*([A-Za-z_]+)\s*=\s*(\[[^\]]*\]|[^\s\]\[]+)")
_TYPE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_ \-]{0,199}$")


@dataclass(frozen=True)
class Slot:
    """One variable of a template: which section, how many items, which types."""

    name: str
    limit: int
    types: tuple[str, ...] = ()
    include_attributes: bool = False


Part = str | Slot


def parse(template: str, *, param: str = "template") -> list[Part]:
    """Split a template into literal text and slots; a 400 naming ``param`` says what is
    wrong and where (unknown variable or parameter, unclosed ``%{``, bad limit)."""
    parts: list[Part] = []
    literal: list[str] = []
    i = 0
    while i < len(template):
        if template.startswith("%%", i):
            literal.append("%")
            i += 2
            continue
        if not template.startswith("%{", i):
            literal.append(template[i])
            i += 1
            continue
        close = template.find("}", i + 2)
        nested = template.find("%{", i + 2)
        if close < 0 or (0 <= nested < close):
            raise BadRequest(f"{param}: '%{{' at character {i} is never closed", param=param)
        if literal:
            parts.append("".join(literal))
            literal = []
        parts.append(_slot(template[i + 2 : close], i, param))
        i = close + 1
    if literal:
        parts.append("".join(literal))
    slots = [p for p in parts if isinstance(p, Slot)]
    if len(slots) > MAX_SLOTS:
        raise BadRequest(
            f"{param}: {len(slots)} variables; a template holds at most {MAX_SLOTS}", param=param
        )
    items = sum(s.limit for s in slots)
    if items > MAX_ITEMS:
        raise BadRequest(
            f"{param}: the variables' limits add up to {items}; at most {MAX_ITEMS} items"
            " per template",
            param=param,
        )
    return parts


def _slot(body: str, at: int, param: str) -> Slot:
    head = re.match(r"\s*([A-Za-z_]+)", body)
    if head is None:
        raise BadRequest(f"{param}: empty variable at character {at}", param=param)
    name = ALIASES.get(head.group(1).lower(), head.group(1).lower())
    if name not in PARAMS:
        known = ", ".join(sorted([*PARAMS, *ALIASES]))
        raise BadRequest(
            f"{param}: unknown variable %{{{head.group(1)}}} at character {at} (known: {known})",
            param=param,
        )
    rest = body[head.end() :]
    values: dict[str, str] = {}
    while rest.strip():
        found = _PARAM.match(rest)
        if found is None:
            raise BadRequest(
                f"{param}: cannot read the parameters {rest.strip()!r} of %{{{name}}}"
                f" at character {at}; write key=value",
                param=param,
            )
        key = found.group(1).lower()
        if key not in PARAMS[name]:
            allowed = ", ".join(sorted(PARAMS[name])) or "none"
            raise BadRequest(
                f"{param}: %{{{name}}} does not take {key} (it takes: {allowed})", param=param
            )
        if key in values:
            raise BadRequest(f"{param}: %{{{name}}} sets {key} twice", param=param)
        values[key] = found.group(2)
        rest = rest[found.end() :]
    return Slot(
        name=name,
        limit=_limit(values.get("limit"), name, param),
        types=_types(values.get("types"), name, param),
        include_attributes=_flag(values.get("include_attributes"), name, param),
    )


def _limit(raw: str | None, name: str, param: str) -> int:
    if raw is None:
        return DEFAULT_LIMITS[name]
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_LIMIT:
        raise BadRequest(
            f"{param}: %{{{name}}} limit must be an integer from 1 to {MAX_LIMIT}; got {raw!r}",
            param=param,
        )
    value = int(raw)
    return min(value, DERIVED_CAP) if name in ("observations", "thread_summaries") else value


def _types(raw: str | None, name: str, param: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not (raw.startswith("[") and raw.endswith("]")):
        raise BadRequest(f"{param}: %{{{name}}} types must look like [A,B]", param=param)
    items = tuple(t.strip() for t in raw[1:-1].split(",") if t.strip())
    if not items or not all(_TYPE_NAME.match(t) for t in items):
        raise BadRequest(
            f"{param}: %{{{name}}} types must list one or more type names, like [A,B]",
            param=param,
        )
    return items


def _flag(raw: str | None, name: str, param: str) -> bool:
    if raw is None:
        return False
    if raw.lower() not in ("true", "false"):
        raise BadRequest(
            f"{param}: %{{{name}}} include_attributes must be true or false", param=param
        )
    return raw.lower() == "true"


# -- storage -------------------------------------------------------------------------------


def _check(name: str | None, template: str | None) -> None:
    if name is not None and not 1 <= len(name.strip()) <= MAX_NAME_CHARS:
        raise BadRequest(f"name must be 1 to {MAX_NAME_CHARS} characters", param="name")
    if template is not None:
        if not template.strip():
            raise BadRequest("template must not be empty", param="template")
        if len(template) > MAX_TEMPLATE_CHARS:
            raise BadRequest(
                f"template holds at most {MAX_TEMPLATE_CHARS} characters", param="template"
            )
        parse(template)


def _unique(ctx: Services, project: Project, name: str, uuid: str | None = None) -> None:
    for other in ctx.store.find(
        ContextTemplate, {"project_uuid": project.uuid, "name": name}, limit=2
    ):
        if other.uuid != uuid:
            # A 400, not a 409: the SDK retries 409s, and a taken name stays taken.
            raise BadRequest(f"a context template named {name!r} exists already", param="name")


def create_template(
    ctx: Services, project: Project, name: str | None, template: str | None
) -> ContextTemplate:
    if name is None:
        raise BadRequest("name is required", param="name")
    if template is None:
        raise BadRequest("template is required", param="template")
    _check(name, template)
    stamp = clock.now()
    record = ContextTemplate(
        uuid=new_id(),
        project_uuid=project.uuid,
        name=name.strip(),
        template=template,
        created_at=stamp,
        updated_at=stamp,
    )
    with ctx.store.transaction():
        _unique(ctx, project, record.name)
        ctx.store.insert([record])
    return record


def get_template(
    ctx: Services, project: Project, template_uuid: str, *, param: str = "template_uuid"
) -> ContextTemplate:
    template_uuid = check_uuid(template_uuid, param=param)
    found = ctx.store.get(ContextTemplate, template_uuid, {"project_uuid": project.uuid})
    if found is None:
        raise NotFound("context template", template_uuid, param=param)
    return found


def list_templates(
    ctx: Services, project: Project, page: PageRequest, name: str | None = None
) -> Page[ContextTemplate]:
    scope: dict[str, str] = {"project_uuid": project.uuid}
    if name:
        scope["name"] = name.strip()
    return ctx.store.list_page(ContextTemplate, scope, page)


def update_template(
    ctx: Services,
    project: Project,
    template_uuid: str,
    name: str | None,
    template: str | None,
) -> ContextTemplate:
    _check(name, template)
    with ctx.store.transaction():
        current = get_template(ctx, project, template_uuid)
        changes: dict[str, str] = {"updated_at": clock.now()}
        if name is not None:
            changes["name"] = name.strip()
            _unique(ctx, project, changes["name"], current.uuid)
        if template is not None:
            changes["template"] = template
        updated = current.model_copy(update=changes)
        ctx.store.update(updated)
    return updated


def delete_template(ctx: Services, project: Project, template_uuid: str) -> None:
    with ctx.store.transaction():
        found = get_template(ctx, project, template_uuid)
        ctx.store.delete(ContextTemplate, {"uuid": found.uuid, "project_uuid": project.uuid})
