"""Projects (tenants) and their API keys. Keys are stored only as SHA-256 hashes."""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable
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


class RecentKeys:
    """Keys that authenticated in the last ``ttl`` seconds, with their project: a request
    with one is let in without a database read (and so, in the API, without a trip
    through the thread pool). A key revoked from another process (``graphrecall keys
    revoke``) is refused at most ``ttl`` seconds later; a change made through this
    process calls :meth:`clear`. Only keys that authenticated are kept, at most
    ``limit`` of them."""

    def __init__(
        self, ttl: float = 2.0, limit: int = 1024, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl = ttl
        self.limit = limit
        self._clock = clock
        self._known: dict[str, tuple[float, Project]] = {}
        self._lock = threading.Lock()

    def get(self, key: str | None) -> Project | None:
        if not key:
            return None
        with self._lock:
            hit = self._known.get(hash_key(key))
        if hit is None or self._clock() - hit[0] >= self.ttl:
            return None
        return hit[1]

    def authenticate(self, store: Store, key: str | None) -> Project:
        """:func:`authenticate`, remembered."""
        project = authenticate(store, key)  # raises for a missing or unknown key
        if key:
            with self._lock:
                if len(self._known) >= self.limit:
                    self._known.clear()
                self._known[hash_key(key)] = (self._clock(), project)
        return project

    def clear(self) -> None:
        with self._lock:
            self._known.clear()


def project_keys(store: Store, project: Project) -> list[ApiKey]:
    """The live (not revoked) keys of ``project``, oldest first."""
    return store.find(
        ApiKey, {"project_uuid": project.uuid, "revoked_at": None}, order_by="created_at"
    )


def key_record(store: Store, key: str) -> ApiKey:
    """The live key record of a secret ``key`` (it was just authenticated)."""
    found = store.find_api_key(hash_key(key))
    if found is None:
        raise Unauthorized("invalid or revoked API key")
    return found
