"""ingest/single_valued.py's decisions on their own: which value is the newer, what an
ending, an addition, history or a plan retires."""

from __future__ import annotations

from graphrecall.ingest.single_valued import SLOTS, Known, decide, period_end, read


def known(uuid: str, relation: str, target: str, *, valid: str, told: str, **more: object) -> Known:
    return Known(
        uuid=uuid,
        relation=relation,
        target_uuid=f"node-{target}",
        target=target,
        fact=f"{relation} {target}",
        valid_at=valid,
        told_at=told,
        arrived_at=told,
        explicit=valid != told,
        **more,  # type: ignore[arg-type]
    )


MUNICH = known("m", "LIVES_IN", "Munich", valid="2024-03-01T10:00:00Z", told="2024-03-01T10:00:00Z")


def test_the_table_is_one_place_and_reads_relations_and_copulas() -> None:
    names = [slot.name for slot in SLOTS]
    assert len(names) == len(set(names))
    assert {"residence", "employer", "occupation", "partner", "age"} <= set(names)
    assert [(r.slot.name, r.kind) for r in read("MOVES_TO", "Berlin")] == [("residence", "start")]
    assert [(r.slot.name, r.kind) for r in read("IS", "a nurse")] == [("occupation", "state")]
    assert read("IS", "a mother") == [] and read("LOVES", "hiking") == []
    kinds = {(r.slot.name, r.kind) for r in read("IS", "retired")}
    assert ("employer", "end_all") in kinds and ("work status", "state") in kinds
    assert {r.kind for r in read("QUITS", "Dana's job")} == {"end_all"}
    assert {r.kind for r in read("LEAVES", "Acme")} == {"end"}


def test_a_date_in_the_same_period_is_ordered_by_when_it_was_said() -> None:
    # "moved to Berlin last month" (March) said in April: after "I live in Munich" of
    # 1 March although its date (1 March, 00:00) is earlier.
    berlin = known(
        "b", "MOVES_TO", "Berlin", valid="2024-03-01T00:00:00Z", told="2024-04-20T10:00:00Z"
    )
    decision = decide(berlin, [MUNICH])
    assert [r.uuid for r in decision.retire] == ["m"] and decision.new_invalid_at is None
    assert decision.retire[0].invalid_at == MUNICH.valid_at  # never before it began


def test_dates_that_tell_the_order_win_over_when_it_was_said() -> None:
    munich = known(
        "m", "MOVES_TO", "Munich", valid="2023-01-01T00:00:00Z", told="2024-01-05T10:00:00Z"
    )
    berlin = known(
        "b", "MOVES_TO", "Berlin", valid="2019-01-01T00:00:00Z", told="2024-06-01T10:00:00Z"
    )
    decision = decide(berlin, [munich])
    assert decision.retire == [] and decision.new_invalid_at == "2023-01-01T00:00:00Z"


def test_a_plan_an_addition_history_and_the_same_message_retire_nothing() -> None:
    plan = known(
        "p", "MOVES_TO", "Paris", valid="2024-05-01T00:00:00Z", told="2024-04-02T10:00:00Z"
    )
    assert decide(plan, [MUNICH]).retire == []
    also = known(
        "a",
        "LIVES_IN",
        "Graz",
        valid="2024-04-02T10:00:00Z",
        told="2024-04-02T10:00:00Z",
        also=True,
    )
    assert decide(also, [MUNICH]).retire == []
    past = known(
        "h",
        "LIVES_IN",
        "Hamburg",
        valid="2024-04-02T10:00:00Z",
        told="2024-04-02T10:00:00Z",
        past=True,
    )
    history = decide(past, [MUNICH])
    assert history.retire == [] and history.new_invalid_at == "2024-04-02T10:00:00Z"
    same = known("s", "LIVES_IN", "Bonn", valid="2024-03-01T10:00:00Z", told="2024-03-01T10:00:00Z")
    sibling = known(
        "k",
        "LIVES_IN",
        "Köln",
        valid="2024-03-01T10:00:00Z",
        told="2024-03-01T10:00:00Z",
        same_episode=True,
    )
    assert decide(same, [sibling]).retire == []


def test_an_ending_retires_what_it_names_unless_that_began_after_it() -> None:
    acme = known("w", "WORKS_AT", "Acme", valid="2024-01-01T09:00:00Z", told="2024-01-01T09:00:00Z")
    other = known(
        "o", "WORKS_AT", "Globex", valid="2024-01-01T09:00:00Z", told="2024-01-01T09:00:00Z"
    )
    left = known("l", "LEAVES", "Acme", valid="2024-05-01T00:00:00Z", told="2024-06-01T09:00:00Z")
    decision = decide(left, [acme, other])
    assert [(r.uuid, r.invalid_at) for r in decision.retire] == [("w", "2024-05-01T00:00:00Z")]
    rejoined = known(
        "r", "JOINS", "Acme", valid="2024-08-01T00:00:00Z", told="2024-09-01T09:00:00Z"
    )
    old_news = known(
        "x", "LEAVES", "Acme", valid="2024-05-01T00:00:00Z", told="2024-09-02T09:00:00Z"
    )
    assert decide(old_news, [rejoined]).retire == []
    retired = known("t", "IS", "retired", valid="2024-09-01T09:00:00Z", told="2024-09-01T09:00:00Z")
    assert {r.uuid for r in decide(retired, [acme, other]).retire} == {"w", "o"}


def test_period_end_reads_the_granularity_of_a_resolved_date() -> None:
    assert period_end("2019-01-01T00:00:00Z").year == 2020
    assert period_end("2024-05-01T00:00:00Z").month == 6
    assert period_end("2024-05-14T00:00:00Z").day == 15
