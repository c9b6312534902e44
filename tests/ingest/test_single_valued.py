"""Contradictions the right way round, through the real pipeline (the SDK, the server, the
offline extractor, SQLite): a newer value of a single-valued relation retires the older
one, never the reverse; an ending retires what it names without a replacement; history,
plans and additions retire nothing; the retired edge says which episode retired it and
why. Sentences written for these tests (not the issue's), across phrasings, tenses and
dates."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from zep_cloud import AddMessage, Zep

from tests import pg_server
from tests.conftest import wait_for_task
from tests.inprocess import InProcess


class Life:
    """One user's life told in messages, each at its own reference time."""

    def __init__(self, zep: Zep, first_name: str) -> None:
        self.zep = zep
        self.name = first_name
        user = zep.user.create(first_name=first_name)
        self.graph = str(user.graph_uuid)
        self.thread = zep.thread.create(user_uuid=user.uuid_).uuid_

    def say(self, text: str, at: str) -> str:
        result = self.zep.thread.add_messages(
            self.thread,
            messages=[AddMessage(role="user", name=self.name, content=text, reference_time=at)],
        )
        assert wait_for_task(self.zep, result.task.uuid_) == "succeeded"
        return str(result.messages[0].uuid_)

    def edge(self, target: str, relation: str | None = None) -> Any:
        found = [
            e
            for e in self.zep.graph.edge.list(self.graph)
            if e.target_node_name == target and (relation is None or e.name == relation)
        ]
        assert len(found) == 1, [(e.name, e.fact) for e in self.zep.graph.edge.list(self.graph)]
        return found[0]

    def valid(self, target: str, relation: str | None = None) -> bool:
        e = self.edge(target, relation)
        return e.invalid_at is None and e.expired_at is None


def retired_by(edge: Any, episode: str, by: Any) -> None:
    """``edge`` was retired by ``by`` (an edge) of ``episode``, and says so."""
    assert edge.invalid_at is not None and edge.expired_at is not None
    assert edge.invalid_at >= (edge.valid_at or "")
    attributes = edge.attributes or {}
    assert attributes["invalidated_by_episode"] == episode
    assert attributes["invalidated_by_edge"] == by.uuid_
    assert attributes["invalidation_reason"]
    assert by.invalid_at is None and by.expired_at is None


@pytest.mark.parametrize(
    ("old", "new", "old_place", "new_place", "ended"),
    [
        # A move dated last month, said three weeks after "I live in": the new home holds.
        ("I live in Munich.", "I moved to Berlin last month.", "Munich", "Berlin", None),
        (
            "I'm based in Austin these days.",
            "We relocated to Denver in May.",
            "Austin",
            "Denver",
            "2024-05-01",
        ),
        ("I live in Leeds.", "I just moved into a flat in York.", "Leeds", "York", None),
        (
            "I have lived in Porto for years.",
            "Two weeks ago I moved to Faro.",
            "Porto",
            "Faro",
            "2024-06-18",
        ),
    ],
)
def test_a_move_retires_the_old_home_never_the_new(
    zep: Zep, old: str, new: str, old_place: str, new_place: str, ended: str | None
) -> None:
    life = Life(zep, "Dana")
    life.say(old, "2024-03-29T10:00:00Z")
    episode = life.say(new, "2024-07-02T10:00:00Z")
    home, moved = life.edge(old_place), life.edge(new_place)
    retired_by(home, episode, moved)
    if ended is not None:
        assert home.invalid_at.startswith(ended)
    assert "residence" in home.attributes["invalidation_reason"]


@pytest.mark.parametrize(
    "ending",
    [
        "I moved away from Munich last month.",
        "I moved out of my flat in Munich.",
        "I don't live in Munich anymore.",
        "I no longer live in Munich.",
    ],
)
def test_leaving_a_home_retires_it_without_a_new_one(zep: Zep, ending: str) -> None:
    life = Life(zep, "Ines")
    life.say("I live in Munich.", "2024-01-05T10:00:00Z")
    episode = life.say(ending, "2024-05-20T10:00:00Z")
    home = life.edge("Munich", "LIVES_IN")
    ender = next(
        e
        for e in zep.graph.edge.list(life.graph)
        if e.target_node_name == "Munich" and e.name != "LIVES_IN"
    )
    retired_by(home, episode, ender)


def test_a_job_change_and_its_endings(zep: Zep) -> None:
    life = Life(zep, "Marco")
    life.say("I work at Acme as a designer.", "2024-01-08T09:00:00Z")
    change = life.say("I left Acme and joined Globex in March.", "2024-04-02T09:00:00Z")
    retired_by(life.edge("Acme", "WORKS_AT"), change, life.edge("Acme", "LEAVES"))
    assert life.valid("Globex", "JOINS")
    # An addition retires nothing.
    life.say("I also work at Hooli on weekends.", "2024-04-10T09:00:00Z")
    assert life.valid("Globex") and life.valid("Hooli")
    # Telling of a past job retires nothing: it is history, stored ended.
    life.say("I worked at Initech.", "2024-04-12T09:00:00Z")
    past = life.edge("Initech")
    assert past.invalid_at is not None and past.expired_at is not None
    assert "past" in past.attributes["invalidation_reason"]
    assert life.valid("Globex") and life.valid("Hooli")
    # A new job retires the jobs known before it.
    hired = life.say("I got a job at Umbrella last week.", "2024-06-20T09:00:00Z")
    new_job = life.edge("Umbrella")
    assert new_job.name == "GETS_JOB_AT" and new_job.valid_at.startswith("2024-06-13")
    retired_by(life.edge("Globex"), hired, new_job)
    retired_by(life.edge("Hooli"), hired, new_job)
    # Retiring ends every employer, with no employer named.
    done = life.say("I'm retired now.", "2024-09-01T09:00:00Z")
    retired_by(life.edge("Umbrella"), done, life.edge("retired"))


def test_quitting_a_named_job_retires_only_that_job(zep: Zep) -> None:
    life = Life(zep, "Lena")
    life.say("I work at Initech.", "2024-02-01T09:00:00Z")
    life.say("I also work for Vandelay on Fridays.", "2024-02-03T09:00:00Z")
    quit_ = life.say("I quit my job at Initech last week.", "2024-05-15T09:00:00Z")
    ender = life.edge("Initech", "QUITS_JOB_AT")
    retired_by(life.edge("Initech", "WORKS_AT"), quit_, ender)
    assert ender.valid_at.startswith("2024-05-08")
    assert life.edge("Initech", "WORKS_AT").invalid_at.startswith("2024-05-08")
    assert life.valid("Vandelay")


def test_a_new_title_retires_the_old_one(zep: Zep) -> None:
    life = Life(zep, "Omar")
    life.say("I work as a designer.", "2024-01-10T09:00:00Z")
    promoted = life.say("I was promoted to lead engineer in May.", "2024-06-01T09:00:00Z")
    retired_by(life.edge("designer"), promoted, life.edge("lead engineer"))
    # "became a mother" is no job title: nothing is retired.
    life.say("I became a mother.", "2024-08-01T09:00:00Z")
    assert life.valid("lead engineer")


@pytest.mark.parametrize(
    ("start", "end", "partner", "ender_relation"),
    [
        ("I am married to Sam.", "Sam and I got divorced in May.", "Sam", "DIVORCES"),
        ("My boyfriend is Chris.", "Chris and I broke up last month.", "Chris", "BREAKS_UP_WITH"),
        ("I'm dating Robin.", "I broke up with Robin yesterday.", "Robin", "BREAKS_UP_WITH"),
        ("My wife is Kim.", "I divorced Kim in 2023.", "Kim", "DIVORCES"),
    ],
)
def test_a_break_up_retires_the_partner(
    zep: Zep, start: str, end: str, partner: str, ender_relation: str
) -> None:
    life = Life(zep, "Alex")
    life.say(start, "2023-01-10T09:00:00Z")
    episode = life.say(end, "2024-06-15T09:00:00Z")
    together = next(
        e
        for e in zep.graph.edge.list(life.graph)
        if e.target_node_name == partner and e.name != ender_relation
    )
    assert together.source_node_name == "Alex"
    retired_by(together, episode, life.edge(partner, ender_relation))
    assert "partner" in together.attributes["invalidation_reason"]


def test_single_again_retires_any_partner_and_a_new_partner_retires_the_old(zep: Zep) -> None:
    life = Life(zep, "Noor")
    life.say("I'm dating Chris.", "2024-01-10T09:00:00Z")
    engaged = life.say("I got engaged to Robin.", "2024-03-10T09:00:00Z")
    retired_by(life.edge("Chris"), engaged, life.edge("Robin"))
    single = life.say("I'm single now.", "2024-07-10T09:00:00Z")
    retired_by(life.edge("Robin"), single, life.edge("single"))


def test_age_has_one_value(zep: Zep) -> None:
    life = Life(zep, "Yuki")
    life.say("I'm 34 years old.", "2024-01-10T09:00:00Z")
    birthday = life.say("I turned 35 last week.", "2024-03-10T09:00:00Z")
    retired_by(life.edge("34 years old"), birthday, life.edge("35 years old"))


def test_additions_history_and_plans_retire_nothing(zep: Zep) -> None:
    life = Life(zep, "Pia")
    life.say("I live in Graz. I love hiking.", "2024-01-10T09:00:00Z")
    life.say("I also love painting.", "2024-01-20T09:00:00Z")
    life.say("Ana is my friend.", "2024-01-21T09:00:00Z")
    life.say("Ben is also my friend.", "2024-01-22T09:00:00Z")
    life.say("I work at Acme.", "2024-01-23T09:00:00Z")
    life.say("I joined a gym last week.", "2024-01-24T09:00:00Z")  # no employer
    life.say("I started yoga classes at a studio.", "2024-01-25T09:00:00Z")
    life.say("I lived in Vienna in 2019.", "2024-02-01T09:00:00Z")
    life.say("I'm moving to Linz next month.", "2024-02-02T09:00:00Z")
    for edge in zep.graph.edge.list(life.graph):
        if edge.target_node_name == "Vienna":  # history: stored ended, retired nothing
            assert edge.invalid_at is not None and edge.valid_at.startswith("2019")
        else:
            assert edge.invalid_at is None and edge.expired_at is None, edge.fact


def test_two_values_in_one_message_are_both_kept(zep: Zep) -> None:
    life = Life(zep, "Rui")
    life.say("I work at Acme. I work at Globex.", "2024-01-10T09:00:00Z")
    assert life.valid("Acme") and life.valid("Globex")


def test_an_older_report_arriving_late_is_history(zep: Zep) -> None:
    """Ordered by when it was said (the reference time), not by arrival: a message from
    February processed after one from June does not retire June's home."""
    life = Life(zep, "Tove")
    life.say("I live in Oslo.", "2024-06-01T09:00:00Z")
    life.say("I live in Bergen.", "2024-02-01T09:00:00Z")
    assert life.valid("Oslo")
    bergen = life.edge("Bergen")
    assert bergen.invalid_at.startswith("2024-06-01") and bergen.expired_at is not None
    assert "newer" in bergen.attributes["invalidation_reason"]


def test_selling_retires_what_was_sold_only(zep: Zep) -> None:
    life = Life(zep, "Ole")
    life.say("I own a Tesla.", "2024-01-10T09:00:00Z")
    life.say("I also own a Vespa.", "2024-01-12T09:00:00Z")
    assert life.valid("Tesla") and life.valid("Vespa")
    sold = life.say("I sold my Tesla in May.", "2024-07-01T09:00:00Z")
    retired_by(life.edge("Tesla", "OWNS"), sold, life.edge("Tesla", "SELLS"))
    assert life.edge("Tesla", "OWNS").invalid_at.startswith("2024-05-01")
    assert life.valid("Vespa")


def test_the_same_decisions_on_postgresql(make_app: Callable[..., InProcess]) -> None:
    """The store-level reads the decisions use (a source's live edges by relation, their
    episodes' reference times, their targets' names) on PostgreSQL."""
    url = pg_server.with_schema(pg_server.server_url(), f"t{uuid.uuid4().hex}")
    zep = make_app(db=url).client()
    life = Life(zep, "Kai")
    life.say("I live in Munich. I work at Acme.", "2024-01-05T10:00:00Z")
    life.say("I'm married to Sam.", "2024-01-06T10:00:00Z")
    moved = life.say("I moved to Berlin last month.", "2024-05-20T10:00:00Z")
    change = life.say("I left Acme and joined Globex.", "2024-05-21T10:00:00Z")
    split = life.say("Sam and I got divorced.", "2024-06-01T10:00:00Z")
    life.say("I also love painting.", "2024-06-02T10:00:00Z")
    retired_by(life.edge("Munich"), moved, life.edge("Berlin"))
    retired_by(life.edge("Acme", "WORKS_AT"), change, life.edge("Acme", "LEAVES"))
    retired_by(life.edge("Sam", "IS_MARRIED_TO"), split, life.edge("Sam", "DIVORCES"))
    assert life.valid("Globex") and life.valid("painting")
