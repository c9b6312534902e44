"""Every public method of ``Store`` is exercised by the conformance suite: a method added
to the interface without a conformance test fails here."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from graphrecall.store import Store

SUITE = Path(__file__).parent


def public_methods() -> set[str]:
    return {
        name
        for name, member in inspect.getmembers(Store, inspect.isfunction)
        if not name.startswith("_")
    }


def test_every_public_method_is_called_by_a_conformance_test() -> None:
    called: set[str] = set()
    for path in SUITE.glob("test_*.py"):
        if path.name == Path(__file__).name:
            continue
        called |= set(re.findall(r"\b(?:store|first|again)\.(\w+)\(", path.read_text()))
    methods = public_methods()
    assert {"insert", "get", "transaction", "iter_all"} <= methods  # the lookup works
    assert methods - called == set()
