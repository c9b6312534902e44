"""API keys: authentication, and the keys remembered for a moment."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphrecall.domain.errors import BadRequest, Unauthorized
from graphrecall.domain.models import ApiKey
from graphrecall.services.accounts import projects
from graphrecall.store import Store, open_store
from tests import pg_server


@pytest.fixture(params=["sqlite", "postgresql"])
def backend_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """An empty store on each backend (PostgreSQL: a schema of its own)."""
    if request.param == "postgresql":
        url = pg_server.with_schema(pg_server.server_url(), f"t{uuid.uuid4().hex}")
    else:
        url = str(tmp_path / "db.sqlite")
    opened = open_store(url)
    yield opened
    opened.close()


def test_a_key_is_remembered_until_its_time_is_up(store: Store) -> None:
    now = [100.0]
    recent = projects.RecentKeys(clock=lambda: now[0])
    assert recent.ttl == projects.CROSS_PROCESS_SECONDS == 1.0
    project = projects.get_or_create_project(store)
    key = projects.create_key(store, project)
    assert recent.get(key) is None  # not seen yet
    assert recent.authenticate(store, key).uuid == project.uuid
    assert recent.get(key) == project and recent.get("gr_other") is None
    # revoked by another process: still let in until the time is up, then refused
    projects.revoke_key(store, store_key_uuid(store))
    now[0] += 0.9
    assert recent.get(key) == project
    now[0] += 0.1
    assert recent.get(key) is None
    with pytest.raises(Unauthorized):
        recent.authenticate(store, key)


def store_key_uuid(store: Store) -> str:
    return next(k.uuid for k, _ in projects.list_keys(store))


def test_only_keys_that_authenticate_are_kept_and_clear_forgets_them(store: Store) -> None:
    recent = projects.RecentKeys(limit=2)
    project = projects.get_or_create_project(store)
    keys = [projects.create_key(store, project) for _ in range(3)]
    for bad in (None, "", "gr_not-a-key"):
        with pytest.raises(Unauthorized):
            recent.authenticate(store, bad)
        assert recent.get(bad) is None
    recent.authenticate(store, keys[0])
    recent.authenticate(store, keys[1])
    assert recent.get(keys[0]) == project and recent.get(keys[1]) == project
    recent.authenticate(store, keys[2])  # past the limit: the others are forgotten
    assert recent.get(keys[0]) is None and recent.get(keys[2]) == project
    recent.clear()
    assert recent.get(keys[2]) is None


def test_a_chosen_key_is_salted_and_stretched_and_no_prefix_is_kept(store: Store) -> None:
    chosen = "correct horse battery staple"
    assert projects.ensure_key(store, chosen) is True
    assert projects.ensure_key(store, chosen) is False  # found again, not duplicated
    (row, _), *_ = projects.list_keys(store)
    assert row.prefix == "" and chosen[:4] not in row.key_hash
    assert row.key_hash.startswith("scrypt$16384$8$1$")
    assert projects.hash_key(chosen) not in row.key_hash
    # Two stores of the same key differ (salted).
    assert projects.stretch_key(chosen) != projects.stretch_key(chosen)
    assert projects.authenticate(store, chosen).name == projects.DEFAULT_PROJECT
    with pytest.raises(Unauthorized):
        projects.authenticate(store, chosen + "x")
    projects.revoke_key(store, row.uuid)
    with pytest.raises(Unauthorized):  # refused at once, though verified before
        projects.authenticate(store, chosen)


def test_a_short_chosen_key_is_refused(store: Store) -> None:
    with pytest.raises(BadRequest) as info:
        projects.ensure_key(store, "short-key-15chr")
    assert info.value.param == "api_key"
    with pytest.raises(BadRequest):
        projects.create_key(store, projects.get_or_create_project(store), key="abc")
    assert projects.list_keys(store) == []


def test_a_generated_key_keeps_its_fast_lookup(store: Store) -> None:
    key = projects.create_key(store, projects.get_or_create_project(store))
    (row, _), *_ = projects.list_keys(store)
    assert row.key_hash == projects.hash_key(key) and row.prefix == key[:8]


def test_a_chosen_key_stored_as_plain_sha256_is_rehashed(store: Store) -> None:
    chosen = "an older deployment's key"
    project = projects.get_or_create_project(store)
    legacy = ApiKey(
        uuid="0190f0f0-0000-7000-8000-00000000abcd",
        project_uuid=project.uuid,
        name=projects.CHOSEN_KEY_NAME,
        prefix=chosen[:8],
        key_hash=projects.hash_key(chosen),
        created_at="2024-01-01T00:00:00.000000Z",
    )
    store.insert([legacy])
    assert projects.authenticate(store, chosen).uuid == project.uuid
    (row, _), *_ = projects.list_keys(store)
    assert row.key_hash.startswith("scrypt$") and row.prefix == ""
    assert projects.authenticate(store, chosen).uuid == project.uuid


def test_the_same_chosen_key_in_two_databases_of_one_process(tmp_path: Path) -> None:
    chosen = "one key, two databases"
    first, second = open_store(tmp_path / "a.db"), open_store(tmp_path / "b.db")
    try:
        with pytest.raises(Unauthorized):  # remembered as a miss for the second store only
            projects.authenticate(second, chosen)
        projects.ensure_key(first, chosen)
        assert projects.authenticate(first, chosen)
        projects.ensure_key(second, chosen)  # its own row, its own uuid
        assert projects.authenticate(second, chosen)
        assert projects.authenticate(first, chosen)
    finally:
        first.close()
        second.close()


def test_a_revoked_environment_key_stays_revoked(backend_store: Store) -> None:
    """GRAPHRECALL_API_KEY revoked through `graphrecall keys revoke` is not created anew
    by the next start (ensure_key): the start is refused, naming the variable."""
    store = backend_store
    chosen = "revoked but still in the environment"
    generated = projects.create_key(store, projects.get_or_create_project(store))
    assert projects.ensure_key(store, chosen) is True
    for key in (chosen, generated):
        row = projects.key_record(store, key)
        projects.revoke_key(store, row.uuid)
        with pytest.raises(BadRequest) as info:
            projects.ensure_key(store, key)
        assert info.value.param == "GRAPHRECALL_API_KEY" and row.uuid in info.value.message
        with pytest.raises(Unauthorized):
            projects.authenticate(store, key)
    assert len(projects.list_keys(store)) == 2  # nothing was created again
    assert projects.ensure_key(store, chosen + " (new)") is True  # another key is fine
