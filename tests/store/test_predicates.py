"""Which filters an index bounds to a few rows (``predicates.bounded``)."""

from __future__ import annotations

from graphrecall.domain import predicates as p
from graphrecall.store import predicates
from graphrecall.store.predicates import bounded


def test_a_few_episodes_or_uuids_are_bounded_alone_or_in_an_and() -> None:
    episodes = p.LinkedToEpisodes(("e1", "e2"))
    uuids = p.Column("uuid", "in", ("a", "b"))
    assert bounded(episodes) and bounded(uuids) and bounded(p.Column("uuid", "eq", "a"))
    broad = p.Column("name", "in", ("WORKS_AT",))
    assert bounded(p.And((broad, episodes)))
    assert bounded(p.And((broad, p.And((p.Column("expired_at", "is_null"), uuids)))))


def test_broad_alternatives_and_long_lists_are_not() -> None:
    episodes = p.LinkedToEpisodes(("e1",))
    assert not bounded(None)
    assert not bounded(p.Column("name", "in", ("WORKS_AT",)))
    assert not bounded(p.Or((episodes, p.Column("name", "eq", "X"))))  # either side may be big
    assert not bounded(p.Not(episodes))
    many = tuple(f"e{i}" for i in range(predicates.BOUNDED_EPISODES + 1))
    assert not bounded(p.LinkedToEpisodes(many))
    ids = tuple(f"u{i}" for i in range(predicates.BOUNDED_UUIDS + 1))
    assert not bounded(p.Column("uuid", "in", ids))
