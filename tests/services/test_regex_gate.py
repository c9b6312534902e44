"""The regex gate (services/regex_gate.py): one search with a caller's pattern per project
at a time, a bounded queue behind it, a 400 naming the field beyond that, and no wait for
other projects."""

from __future__ import annotations

import threading
import time

import pytest

from graphrecall.services.regex_gate import RegexBusy, RegexGate


def test_a_project_runs_one_at_a_time_and_others_do_not_wait() -> None:
    gate = RegexGate(running=1, waiting=1, wait_s=5.0)
    inside = threading.Event()
    release = threading.Event()
    order: list[str] = []

    def first() -> None:
        with gate.slot("a", "grep"):
            inside.set()
            release.wait(5)
            order.append("first")

    def queued() -> None:
        with gate.slot("a", "grep"):
            order.append("queued")

    t1 = threading.Thread(target=first)
    t1.start()
    assert inside.wait(5)
    t2 = threading.Thread(target=queued)
    t2.start()
    # Another project is not held up by project a's search.
    with gate.slot("b", "grep"):
        order.append("other project")
    # A third search of project a finds the queue full: refused at once, naming the field.
    deadline = time.monotonic() + 5
    while gate.waiting("a") < 1 and time.monotonic() < deadline:
        time.sleep(0.005)
    assert gate.waiting("a") == 1
    with pytest.raises(RegexBusy) as refused, gate.slot("a", "metaPredicate"):
        pass
    assert refused.value.param == "metaPredicate" and refused.value.status == 400
    release.set()
    t1.join(5)
    t2.join(5)
    assert order == ["other project", "first", "queued"]


def test_a_wait_past_its_limit_is_refused() -> None:
    gate = RegexGate(running=1, waiting=4, wait_s=0.05)
    with gate.slot("a", "grep"), pytest.raises(RegexBusy), gate.slot("a", "grep"):
        pass
    with gate.slot("a", "grep"):  # the slot is free again
        pass
