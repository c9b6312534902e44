"""Property-based fuzzing of the served OpenAPI document with schemathesis, bounded and
seeded so a failure reproduces: no request may get a 5xx, a status the document does not
declare, or a body that does not match the declared schema."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.conftest import API_KEY, Server, _free_port

# Slow: a few thousand fuzzed requests against a server process.
pytestmark = pytest.mark.slow

EXAMPLES_PER_OPERATION = 40  # x ~60 operations: a few thousand cases, a few minutes
HEADERS = {"Authorization": f"Api-Key {API_KEY}"}


@pytest.fixture(scope="module")
def fuzzed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    db: Path = tmp_path_factory.mktemp("fuzz") / "graphrecall.db"
    server = Server(db, _free_port(), API_KEY, {"GRAPHRECALL_EMBEDDER": "none"}).start()
    yield server
    server.stop()


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


def test_the_api_never_fails_and_keeps_its_document(fuzzed_server: Server) -> None:
    root = f"http://127.0.0.1:{fuzzed_server.port}"
    api = schemathesis.openapi.from_url(f"{root}/openapi.json", headers=HEADERS)
    failures: list[str] = []
    cases = 0
    for result in api.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            derandomize=True,  # a fixed seed: the same cases every run
            deadline=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        def run(case: Any) -> None:
            nonlocal cases
            cases += 1
            case.call_and_validate(base_url=root, headers=HEADERS, checks=CHECKS)

        try:
            run()
        except (Exception, BaseExceptionGroup) as exc:  # one entry per failing operation
            failures.append(f"{operation.label}: {str(exc)[:1500]}")
    print(f"schemathesis: {cases} cases")
    assert cases > 1000
    assert not failures, "\n\n".join(failures)
