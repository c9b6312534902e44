"""User groups through the SDK: create, list (search, pages), get, update with
expected_version, members added, listed, removed (one or many), member candidates, a
user's groups, delete; a deleted user leaves its groups; the error contract."""

from __future__ import annotations

import pytest
from zep_cloud import Zep
from zep_cloud.errors import BadRequestError, ConflictError, NotFoundError

from tests.api.zep_v4.test_errors import raw
from tests.inprocess import InProcess

KEYS_CREATE = ("keys", "create", "--project", "ug-other")
UNKNOWN = "00000000-0000-7000-8000-000000000000"


def test_a_group_is_created_read_listed_and_updated(server: InProcess, zep: Zep) -> None:
    group = zep.user_group.create(name="Support team", description="Tier 1")
    assert group.name == "Support team" and group.description == "Tier 1"
    assert group.version == 1 and group.created_at and group.updated_at
    assert zep.user_group.get(group.uuid_ or "") == group
    other = zep.user_group.create(name="Billing")
    found = [g.uuid_ for g in zep.user_group.list(search="support")]
    assert found == [group.uuid_]
    page = zep.user_group.list(page_size=1)
    assert page.items and len(page.items) == 1
    assert {group.uuid_, other.uuid_} <= {g.uuid_ for g in zep.user_group.list(page_size=1)}

    updated = zep.user_group.update(group.uuid_ or "", name="Support", expected_version=1)
    assert updated.name == "Support" and updated.version == 2
    assert updated.description == "Tier 1"
    # A stale version is a 409 naming expected_version (the SDK retries 409s: none here).
    client = server.client()
    with pytest.raises(ConflictError) as info:
        client.user_group.update(group.uuid_ or "", description="x", expected_version=1)
    assert info.value.body.error.param == "expected_version"
    assert zep.user_group.get(group.uuid_ or "").description == "Tier 1"
    assert zep.user_group.update(group.uuid_ or "", description="All tiers").version == 3


def test_members_are_added_listed_and_removed(zep: Zep) -> None:
    group = zep.user_group.create(name="Pilots")
    ana = zep.user.create(user_id="ana-ug", first_name="Ana")
    ben = zep.user.create(user_id="ben-ug", first_name="Ben")
    cy = zep.user.create(user_id="cy-ug", first_name="Cy")
    dee = zep.user.create(user_id="dee-ug", first_name="Dee")
    gid = group.uuid_ or ""

    added = zep.user_group.add_members(gid, user_uuids=[ana.uuid_, ben.uuid_, ana.uuid_])
    assert added.added_count == 2 and added.no_op_count == 0
    again = zep.user_group.add_members(gid, user_uuids=[ben.uuid_, cy.uuid_])
    assert again.added_count == 1 and again.no_op_count == 1
    members = {u.uuid_ for u in zep.user_group.list_members(gid)}
    assert members == {ana.uuid_, ben.uuid_, cy.uuid_}
    assert [u.uuid_ for u in zep.user_group.list_members(gid, search="ben-ug")] == [ben.uuid_]
    candidates = {u.uuid_ for u in zep.user_group.list_member_candidates(gid)}
    assert dee.uuid_ in candidates and not candidates & members
    assert [g.uuid_ for g in zep.user_group.list_for_user(ana.uuid_ or "")] == [gid]

    removed = zep.user_group.remove_members(gid, user_uuids=[ana.uuid_, ana.uuid_])
    assert removed.removed_count == 1 and removed.no_op_count == 0
    again_removed = zep.user_group.remove_members(gid, user_uuids=[ana.uuid_])
    assert again_removed.removed_count == 0 and again_removed.no_op_count == 1
    assert zep.user_group.remove_member(gid, ben.uuid_ or "") is None
    zep.user_group.remove_member(gid, ben.uuid_ or "")  # no longer a member: a no-op
    assert [u.uuid_ for u in zep.user_group.list_members(gid)] == [cy.uuid_]
    assert ana.uuid_ in {u.uuid_ for u in zep.user_group.list_member_candidates(gid)}
    assert list(zep.user_group.list_for_user(ana.uuid_ or "")) == []

    # A deleted user leaves its groups; a deleted group takes its memberships with it.
    zep.user.delete(cy.uuid_ or "")
    assert list(zep.user_group.list_members(gid)) == []
    zep.user_group.add_members(gid, user_uuids=[ana.uuid_])
    assert zep.user_group.delete(gid) is None
    with pytest.raises(NotFoundError):
        zep.user_group.get(gid)
    assert list(zep.user_group.list_for_user(ana.uuid_ or "")) == []


def test_user_group_errors(server: InProcess, zep: Zep) -> None:
    group = zep.user_group.create(name="Errors")
    gid = group.uuid_ or ""
    user = zep.user.create(user_id="ug-errors")
    with pytest.raises(BadRequestError) as info:
        zep.user_group.create(name="")
    assert info.value.body.error.param == "name"
    with pytest.raises(BadRequestError) as info:
        zep.user_group.get("nope")
    assert info.value.body.error.param == "group_uuid"
    with pytest.raises(NotFoundError) as missing:
        zep.user_group.get(UNKNOWN)
    assert missing.value.body.error.param == "group_uuid"
    with pytest.raises(NotFoundError) as missing:  # all or nothing
        zep.user_group.add_members(gid, user_uuids=[user.uuid_, UNKNOWN])
    assert missing.value.body.error.param == "user_uuids[1]"
    assert list(zep.user_group.list_members(gid)) == []
    with pytest.raises(BadRequestError) as info:
        zep.user_group.add_members(gid, user_uuids=[])
    assert info.value.body.error.param == "user_uuids"
    with pytest.raises(BadRequestError) as info:
        zep.user_group.update(gid, expected_version=0)
    assert info.value.body.error.param == "expected_version"
    with pytest.raises(NotFoundError):
        zep.user_group.remove_member(gid, UNKNOWN)
    with pytest.raises(NotFoundError):
        zep.user_group.list_for_user(UNKNOWN)
    answer = raw(server, "DELETE", f"/user-groups/{gid}")
    assert answer.status_code == 200 and answer.json()["uuid"] == gid
    assert raw(server, "DELETE", f"/user-groups/{gid}").status_code == 404

    key = server.cli(*KEYS_CREATE)
    other = server.client(api_key=key)
    mine = zep.user_group.create(name="Mine")
    mid = mine.uuid_ or ""
    zep.user_group.add_members(mid, user_uuids=[user.uuid_])
    with pytest.raises(NotFoundError):
        other.user_group.get(mid)
    with pytest.raises(NotFoundError):
        other.user_group.update(mid, name="stolen")
    with pytest.raises(NotFoundError):
        other.user_group.delete(mid)
    with pytest.raises(NotFoundError):
        other.user_group.list_members(mid)
    with pytest.raises(NotFoundError):
        other.user_group.list_for_user(user.uuid_ or "")
    assert mid not in {g.uuid_ for g in other.user_group.list()}
    theirs = other.user_group.create(name="Theirs")
    with pytest.raises(NotFoundError) as missing:  # another project's user
        other.user_group.add_members(theirs.uuid_ or "", user_uuids=[user.uuid_])
    assert missing.value.body.error.param == "user_uuids[0]"
    assert user.uuid_ not in {
        u.uuid_ for u in other.user_group.list_member_candidates(theirs.uuid_ or "")
    }
    assert zep.user_group.get(mid).name == "Mine"
