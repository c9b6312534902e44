"""Spaces: the Memory Engine tenants of a project, and who is calling into one.

A space belongs to one project and is addressed by an immutable 12-character slug (the
``X-Me-Space`` header). Every live API key of the project may use every space of the
project with full access; the key is the principal (its home is ``~``).
"""

from __future__ import annotations

import re
import secrets
import string
from dataclasses import dataclass

from graphrecall.domain import clock
from graphrecall.domain.errors import BadRequest, Conflict, Forbidden, NotFound, Unauthorized
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import ApiKey, Project, Space
from graphrecall.domain.tree_paths import home_of
from graphrecall.services.accounts import projects
from graphrecall.store.base import Store

SLUG_CHARS = string.ascii_lowercase + string.digits
SLUG_LENGTH = 12
_SLUG = re.compile(rf"^[a-z0-9]{{{SLUG_LENGTH}}}$")
LOCAL_PRINCIPAL = "local"  # the caller of an in-process session without an API key


@dataclass(frozen=True)
class Caller:
    """Who acts in which space: the project, the space, and the principal (a key)."""

    project: Project
    space: Space
    principal_id: str
    principal_name: str

    @property
    def home(self) -> str:
        return home_of(self.principal_id)


def check_slug(slug: str, *, param: str = "slug") -> str:
    if not _SLUG.match(slug):
        raise BadRequest(
            f"{param} must be {SLUG_LENGTH} lowercase letters or digits, got {slug!r}",
            param=param,
        )
    return slug


def create_space(store: Store, project: Project, name: str, slug: str | None = None) -> Space:
    """Create a space (a random slug unless one is given)."""
    name = name.strip()
    if not name or len(name) > 200:
        raise BadRequest("a space name is 1 to 200 characters", param="name")
    with store.transaction():
        if slug is None:
            slug = "".join(secrets.choice(SLUG_CHARS) for _ in range(SLUG_LENGTH))
        elif store.find(Space, {"slug": check_slug(slug)}, limit=1):
            raise Conflict(f"a space with slug {slug!r} already exists", param="slug")
        space = Space(
            uuid=new_id(), project_uuid=project.uuid, slug=slug, name=name, created_at=clock.now()
        )
        store.insert([space])
        return space


def ensure_space(store: Store, slug: str, project_name: str = projects.DEFAULT_PROJECT) -> bool:
    """Make sure a space with ``slug`` exists (``GRAPHRECALL_SPACE``); True if created."""
    check_slug(slug, param="GRAPHRECALL_SPACE")
    with store.transaction():
        if store.find(Space, {"slug": slug}, limit=1):
            return False
        create_space(store, projects.get_or_create_project(store, project_name), slug, slug)
        return True


def list_spaces(store: Store) -> list[tuple[Space, Project]]:
    names = {p.uuid: p for p in store.find(Project, {})}
    return [(s, names[s.project_uuid]) for s in store.find(Space, {}, order_by="created_at")]


def space_by_slug(store: Store, slug: str) -> Space | None:
    found = store.find(Space, {"slug": slug}, limit=1)
    return found[0] if found else None


def authenticate(store: Store, key: str | None, slug: str) -> Caller:
    """The caller of a space request. A bad key is 401 whatever the slug; with a good key,
    a space of another project and a space that does not exist are the same 403, so a
    tenant cannot probe which slugs exist (issue 47)."""
    if not key:
        raise Unauthorized("Authentication required (Authorization: Bearer <api key>)")
    api_key = projects.find_key(store, key)
    if api_key is None:
        raise Unauthorized("Invalid credentials")
    space = space_by_slug(store, slug)
    if space is None or api_key.project_uuid != space.project_uuid:
        raise Forbidden("No access to this space")
    project = store.get(Project, space.project_uuid)
    if project is None:  # pragma: no cover - a space always belongs to a project
        raise Forbidden("No access to this space")
    return key_caller(project, space, api_key)


def key_caller(project: Project, space: Space, api_key: ApiKey) -> Caller:
    return Caller(project, space, api_key.uuid, api_key.name or api_key.prefix or api_key.uuid)


def local_caller(store: Store, slug: str) -> Caller:
    """An in-process caller (``graphrecall mcp`` without a key) of the space ``slug``."""
    space = space_by_slug(store, check_slug(slug, param="space"))
    if space is None:
        raise BadRequest(f"no space with slug {slug!r}", param="space")
    project = store.get(Project, space.project_uuid)
    if project is None:  # pragma: no cover
        raise BadRequest(f"space {slug!r} has no project", param="space")
    return Caller(project, space, LOCAL_PRINCIPAL, LOCAL_PRINCIPAL)


def project_spaces(store: Store, project: Project) -> list[Space]:
    return store.find(Space, {"project_uuid": project.uuid}, order_by="created_at")


def rename_space(store: Store, project: Project, slug: str, name: str) -> Space:
    """Give a space of ``project`` a new display name (the slug never changes)."""
    name = name.strip()
    if not name or len(name) > 200:
        raise BadRequest("a space name is 1 to 200 characters", param="name")
    with store.transaction():
        space = space_by_slug(store, slug)
        if space is None or space.project_uuid != project.uuid:
            raise NotFound("space", slug, param="slug")
        renamed = space.model_copy(update={"name": name})
        store.update(renamed)
        return renamed
