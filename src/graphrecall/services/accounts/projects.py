"""Projects (tenants) and their API keys.

A key is never stored, only a hash in ``api_keys.key_hash``, whose form says how it was
made (no schema change was needed):

- a generated key (``gr_`` + 32 random bytes) is stored as its plain SHA-256 hex digest,
  which is safe for 256 random bits and lets a request find its row in one indexed read;
  its first 8 characters are kept as ``prefix`` to tell keys apart;
- a chosen key (``GRAPHRECALL_API_KEY``, ``create_key(key=...)``), which may be guessable,
  is salted and stretched: ``scrypt$16384$8$1$<salt>$<digest>``; no prefix of it is kept,
  and one shorter than ``MIN_CHOSEN_KEY_CHARS`` is refused. A request with a chosen key
  is checked against every chosen key's hash once; the verified key's row is then
  remembered in memory (by a SHA-256 of the key, never stored), so later requests cost
  one read, as for a generated key, and a revoked key is refused at once.

A chosen key stored by an older version as plain SHA-256 is re-hashed the first time it
authenticates.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import threading
import time
import weakref
from collections.abc import Callable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from graphrecall.domain import clock
from graphrecall.domain.errors import BadRequest, NotFound, Unauthorized
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import ApiKey, Project
from graphrecall.store.base import Store

DEFAULT_PROJECT = "default"
KEY_PREFIX = "gr_"
MIN_CHOSEN_KEY_CHARS = 16
CHOSEN_KEY_NAME = "from environment"
# scrypt's cost: ~16 MiB and tens of milliseconds a check, paid once per key and process.
_SCRYPT_N, _SCRYPT_R, _SCRYPT_P = 16384, 8, 1
_SCHEME = "scrypt"


def hash_key(key: str) -> str:
    """The stored form of a generated key (and the in-memory id of any key)."""
    return hashlib.sha256(key.encode()).hexdigest()


def stretch_key(key: str, salt: bytes | None = None) -> str:
    """The stored form of a chosen key: ``scrypt$N$r$p$<salt>$<digest>`` (base64)."""
    salt = salt or secrets.token_bytes(16)
    digest = _scrypt(key, salt, _SCRYPT_N, _SCRYPT_R, _SCRYPT_P)
    encode = base64.urlsafe_b64encode
    return (
        f"{_SCHEME}${_SCRYPT_N}${_SCRYPT_R}${_SCRYPT_P}$"
        f"{encode(salt).decode()}${encode(digest).decode()}"
    )


def _scrypt(key: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(key.encode(), salt=salt, n=n, r=r, p=p, maxmem=64 << 20, dklen=32)


def _verify_stretched(key: str, stored: str) -> bool:
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != _SCHEME:
            return False
        decode = base64.urlsafe_b64decode
        actual = _scrypt(key, decode(salt), int(n), int(r), int(p))
        return hmac.compare_digest(actual, decode(digest))
    except ValueError:
        return False


def check_chosen_key(key: str) -> None:
    if len(key) < MIN_CHOSEN_KEY_CHARS:
        raise BadRequest(
            f"a chosen API key needs at least {MIN_CHOSEN_KEY_CHARS} characters"
            f" (got {len(key)}); or leave it unset to have one generated",
            param="api_key",
        )


# How long an in-memory copy of key state may lag a write made by another process: any
# number of API processes share one database, and one must notice another's writes
# within a second (docs/architecture.md, "Caches").
CROSS_PROCESS_SECONDS = 1.0


class _ChosenKeys:
    """Which chosen key (by an in-memory SHA-256 of it) is which row, once verified;
    and which keys recently matched none, so a flood of wrong keys does not run scrypt
    for each. A remembered hit is checked against its row on every use; a miss is
    trusted for ``miss_ttl`` only, so a key chosen through another process (another API
    process, ``graphrecall keys``) is let in at most that long after."""

    def __init__(self, miss_ttl: float = CROSS_PROCESS_SECONDS, limit: int = 4096) -> None:
        self.miss_ttl, self.limit = miss_ttl, limit
        self._hits: dict[str, str] = {}
        self._misses: dict[str, float] = {}
        self._lock = threading.Lock()

    def find(self, store: Store, key: str, digest: str) -> ApiKey | None:
        with self._lock:
            uuid = self._hits.get(digest)
            missed = self._misses.get(digest)
        if uuid is not None:
            row = store.get(ApiKey, uuid)
            if row is not None and row.revoked_at is None:
                return row
        elif missed is not None and time.monotonic() - missed < self.miss_ttl:
            return None
        for row in store.find(ApiKey, {"revoked_at": None}):
            if row.key_hash.startswith(_SCHEME + "$") and _verify_stretched(key, row.key_hash):
                with self._lock:
                    if len(self._hits) >= self.limit:
                        self._hits.clear()
                    self._hits[digest] = row.uuid
                return row
        with self._lock:
            if len(self._misses) >= self.limit:
                self._misses.clear()
            self._misses[digest] = time.monotonic()
        return None

    def forget_misses(self) -> None:
        with self._lock:
            self._misses.clear()


# One per store: a process may open several databases (tests, benchmarks, the CLI).
_chosen_by_store: weakref.WeakKeyDictionary[Store, _ChosenKeys] = weakref.WeakKeyDictionary()
_chosen_lock = threading.Lock()


def _chosen(store: Store) -> _ChosenKeys:
    with _chosen_lock:
        found = _chosen_by_store.get(store)
        if found is None:
            found = _chosen_by_store[store] = _ChosenKeys()
        return found


def find_key(store: Store, key: str) -> ApiKey | None:
    """The live key row of ``key``, generated or chosen; None when there is none."""
    digest = hash_key(key)
    row = store.find_api_key(digest)
    if row is not None:
        if row.name == CHOSEN_KEY_NAME:  # a chosen key stored by an older version
            row = row.model_copy(update={"key_hash": stretch_key(key), "prefix": ""})
            store.update(row)
        return row
    return _chosen(store).find(store, key, digest)


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
    if key is None:
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        prefix, key_hash = key[:8], hash_key(key)
    else:
        check_chosen_key(key)
        prefix, key_hash = "", stretch_key(key)
        _chosen(store).forget_misses()
    store.insert(
        [
            ApiKey(
                uuid=new_id(),
                project_uuid=project.uuid,
                name=name,
                prefix=prefix,
                key_hash=key_hash,
                created_at=clock.now(),
            )
        ]
    )
    return key


def ensure_key(store: Store, key: str, project_name: str = DEFAULT_PROJECT) -> bool:
    """Make sure ``key`` is a live key (used for GRAPHRECALL_API_KEY); True if created.

    A key that was revoked stays revoked: starting again with the same variable raises
    a BadRequest naming GRAPHRECALL_API_KEY (``serve`` prints it as one line) instead of
    creating the key anew, which let a revoked key back in on the next restart."""
    check_chosen_key(key)
    with store.transaction():
        if find_key(store, key) is not None:
            return False
        revoked = revoked_key(store, key)
        if revoked is not None:
            raise BadRequest(
                f"GRAPHRECALL_API_KEY was revoked (key {revoked.uuid}, at {revoked.revoked_at});"
                " set a new key, or unset the"
                " variable to have one generated",
                param="GRAPHRECALL_API_KEY",
            )
        create_key(store, get_or_create_project(store, project_name), name=CHOSEN_KEY_NAME, key=key)
        return True


def revoked_key(store: Store, key: str) -> ApiKey | None:
    """The revoked row ``key`` matches, if any (generated, legacy or stretched). Checks
    every revoked stretched hash: for ``serve``'s start only, never a request."""
    digest = hash_key(key)
    for row in store.find(ApiKey, {}):
        if row.revoked_at is None:
            continue
        if row.key_hash == digest or (
            row.key_hash.startswith(_SCHEME + "$") and _verify_stretched(key, row.key_hash)
        ):
            return row
    return None


def list_keys(store: Store) -> list[tuple[ApiKey, Project]]:
    projects = {p.uuid: p for p in store.find(Project, {})}
    return [(k, projects[k.project_uuid]) for k in store.find(ApiKey, {}, order_by="created_at")]


def revoke_key(store: Store, key_uuid_or_prefix: str) -> ApiKey:
    with store.transaction():
        for key in store.find(ApiKey, {"revoked_at": None}):
            if key_uuid_or_prefix and key_uuid_or_prefix in (key.uuid, key.prefix):
                revoked = key.model_copy(update={"revoked_at": clock.now()})
                store.update(revoked)
                return revoked
    raise NotFound("api key", key_uuid_or_prefix)


def authenticate(store: Store, key: str | None) -> Project:
    if not key:
        raise Unauthorized("missing API key: send 'Authorization: Api-Key <key>'")
    api_key = find_key(store, key)
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
    through the thread pool). A key revoked from another process (another API process
    on the same database, ``graphrecall keys revoke``) is refused at most ``ttl``
    seconds later; a change made through this process calls :meth:`clear`. Only keys
    that authenticated are kept, at most ``limit`` of them."""

    def __init__(
        self,
        ttl: float = CROSS_PROCESS_SECONDS,
        limit: int = 1024,
        clock: Callable[[], float] = time.monotonic,
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
    found = find_key(store, key)
    if found is None:
        raise Unauthorized("invalid or revoked API key")
    return found
