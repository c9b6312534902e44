"""Projects (tenants) and their API keys. Keys are stored only as SHA-256 hashes."""

from __future__ import annotations

import hashlib
import secrets
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from graphrecall.domain import clock
from graphrecall.domain.errors import BadRequest, NotFound, Unauthorized
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import ApiKey, Project
from graphrecall.store.base import Store

DEFAULT_PROJECT = "default"
KEY_PREFIX = "gr_"


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def check_time_zone(value: str | None, *, param: str) -> str | None:
    if value is None:
        return None
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise BadRequest(f"{param} is not an IANA time zone: {value!r}", param=param) from None
    return value


def get_or_create_project(store: Store, name: str = DEFAULT_PROJECT) -> Project:
    with store.transaction():
        found = store.find(Project, {"name": name}, limit=1)
        if found:
            return found[0]
        project = Project(uuid=new_id(), name=name, created_at=clock.now())
        store.insert([project])
        return project


def create_key(
    store: Store, project: Project, name: str | None = None, key: str | None = None
) -> str:
    """Create a key (random unless given) and return it; only its hash is kept."""
    key = key or KEY_PREFIX + secrets.token_urlsafe(32)
    store.insert(
        [
            ApiKey(
                uuid=new_id(),
                project_uuid=project.uuid,
                name=name,
                prefix=key[:8],
                key_hash=hash_key(key),
                created_at=clock.now(),
            )
        ]
    )
    return key


def ensure_key(store: Store, key: str, project_name: str = DEFAULT_PROJECT) -> bool:
    """Make sure ``key`` is a live key (used for GRAPHRECALL_API_KEY); True if created."""
    with store.transaction():
        if store.find_api_key(hash_key(key)) is not None:
            return False
        create_key(
            store, get_or_create_project(store, project_name), name="from environment", key=key
        )
        return True


def list_keys(store: Store) -> list[tuple[ApiKey, Project]]:
    projects = {p.uuid: p for p in store.find(Project, {})}
    return [(k, projects[k.project_uuid]) for k in store.find(ApiKey, {}, order_by="created_at")]


def revoke_key(store: Store, key_uuid_or_prefix: str) -> ApiKey:
    with store.transaction():
        for key in store.find(ApiKey, {"revoked_at": None}):
            if key_uuid_or_prefix in (key.uuid, key.prefix):
                revoked = key.model_copy(update={"revoked_at": clock.now()})
                store.update(revoked)
                return revoked
    raise NotFound("api key", key_uuid_or_prefix)


def authenticate(store: Store, key: str | None) -> Project:
    if not key:
        raise Unauthorized("missing API key: send 'Authorization: Api-Key <key>'")
    api_key = store.find_api_key(hash_key(key))
    if api_key is None:
        raise Unauthorized("invalid or revoked API key")
    project = store.get(Project, api_key.project_uuid)
    if project is None:  # pragma: no cover - a key always belongs to a project
        raise Unauthorized("the key's project no longer exists")
    return project


def update_project(store: Store, project: Project, default_time_zone: str | None) -> Project:
    updated = project.model_copy(
        update={"default_time_zone": check_time_zone(default_time_zone, param="default_time_zone")}
    )
    store.update(updated)
    return updated
