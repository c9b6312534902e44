"""API keys: authentication, and the keys remembered for a moment."""

from __future__ import annotations

import pytest

from graphrecall.domain.errors import Unauthorized
from graphrecall.services import projects
from graphrecall.store import Store


def test_a_key_is_remembered_until_its_time_is_up(store: Store) -> None:
    now = [100.0]
    recent = projects.RecentKeys(ttl=2.0, clock=lambda: now[0])
    project = projects.get_or_create_project(store)
    key = projects.create_key(store, project)
    assert recent.get(key) is None  # not seen yet
    assert recent.authenticate(store, key).uuid == project.uuid
    assert recent.get(key) == project and recent.get("gr_other") is None
    # revoked by another process: still let in until the time is up, then refused
    projects.revoke_key(store, store_key_uuid(store))
    now[0] += 1.9
    assert recent.get(key) == project
    now[0] += 0.2
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
