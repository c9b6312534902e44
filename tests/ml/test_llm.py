"""The LLM extractor against a local server speaking the chat-completions protocol."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from zep_cloud import AddMessage

from graphrecall.ml.extraction import ExtractionFailed, ExtractionInput
from graphrecall.ml.llm import LlmExtractor, OpenAIChatClient
from tests import pg_server
from tests.conftest import wait_for_task
from tests.inprocess import InProcess

GOOD = {
    "entities": [{"name": "Dana", "label": "Person"}, {"name": "Lisbon", "label": "Location"}],
    "facts": [
        {
            "source": "Dana",
            "relation": "LIVES_IN",
            "target": "Lisbon",
            "fact": "Dana lives in Lisbon",
            "valid_at": "in 2021",
        }
    ],
}


class FakeLLM:
    """Answers each request with the next scripted reply: a dict (sent as the message
    content, JSON-encoded), a str (sent verbatim as content) or an int (an HTTP status)."""

    def __init__(self) -> None:
        self.script: list[Any] = []
        self.default: Any = GOOD
        self.requests: list[dict[str, Any]] = []
        # A request whose prompt holds this text is answered with garbage, whatever the
        # script says (requests of a batch arrive in any order).
        self.refuse: str | None = None
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(
                    {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
                )
                reply = fake.script.pop(0) if fake.script else fake.default
                if fake.refuse is not None and fake.refuse in json.dumps(body["messages"]):
                    reply = "garbage"
                if isinstance(reply, int):
                    self.send_response(reply)
                    self.end_headers()
                    return
                content = reply if isinstance(reply, str) else json.dumps(reply)
                data = json.dumps(
                    {"choices": [{"message": {"role": "assistant", "content": content}}]}
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture()
def llm() -> Iterator[FakeLLM]:
    fake = FakeLLM()
    yield fake
    fake.httpd.shutdown()


def item(text: str = "I live in Lisbon since 2021.") -> ExtractionInput:
    return ExtractionInput(text=text, speaker="Dana", reference_time="2024-01-01T00:00:00Z")


def extractor(llm: FakeLLM) -> LlmExtractor:
    return LlmExtractor(
        OpenAIChatClient(
            llm.url, model="test-model", api_key="sk-test", backoff=0.01, max_retries=2
        )
    )


def test_valid_answer(llm: FakeLLM) -> None:
    [result] = extractor(llm).extract([item()])
    assert result.facts[0].relation == "LIVES_IN" and result.entities[1].name == "Lisbon"
    request = llm.requests[0]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer sk-test"
    assert request["body"]["model"] == "test-model"
    assert request["body"]["response_format"] == {"type": "json_object"}
    assert "Speaker: Dana" in request["body"]["messages"][1]["content"]


def test_malformed_json_is_retried_with_the_error_quoted(llm: FakeLLM) -> None:
    llm.script = ["{not json", {"facts": "wrong shape"}]
    [result] = extractor(llm).extract([item()])
    assert result.facts[0].target == "Lisbon"
    assert len(llm.requests) == 3
    assert "not valid" in llm.requests[1]["body"]["messages"][-1]["content"]


def test_transport_errors_back_off_then_succeed(llm: FakeLLM) -> None:
    llm.script = [503, 429]
    assert extractor(llm).extract([item()])[0].facts
    assert len(llm.requests) == 3


def test_garbage_forever_fails_clearly(llm: FakeLLM) -> None:
    llm.default = "still not json"
    with pytest.raises(ExtractionFailed, match="invalid JSON"):
        extractor(llm).extract([item()])
    llm.default = 500
    with pytest.raises(ExtractionFailed, match="failed after 3 attempts"):
        extractor(llm).extract([item()])


def test_batches_run_concurrently_in_order(llm: FakeLLM) -> None:
    results = extractor(llm).extract([item(f"text {i}") for i in range(6)])
    assert len(results) == 6 and len(llm.requests) == 6


def test_server_records_failure_keeps_episode_and_retries(
    llm: FakeLLM, make_app: Callable[..., InProcess]
) -> None:
    server = make_app(env={"GRAPHRECALL_LLM_BASE_URL": llm.url, "GRAPHRECALL_LLM_MAX_RETRIES": "0"})
    zep = server.client()
    user = zep.user.create(first_name="Dana")
    thread = zep.thread.create(user_uuid=user.uuid_)
    ok = zep.thread.add_messages(
        thread.uuid_,
        messages=[AddMessage(role="user", name="Dana", content="I live in Lisbon since 2021.")],
    )
    assert wait_for_task(zep, ok.task.uuid_) == "succeeded"
    [lives] = [e for e in zep.graph.edge.list(user.graph_uuid) if e.name == "LIVES_IN"]
    assert lives.valid_at == "2021-01-01T00:00:00.000000Z"

    llm.default = "garbage"
    bad = zep.thread.add_messages(
        thread.uuid_, messages=[AddMessage(role="user", name="Dana", content="I adopted a cat.")]
    )
    assert wait_for_task(zep, bad.task.uuid_) == "failed"
    task = zep.task.get(bad.task.uuid_)
    assert task.error is not None and "invalid JSON" in (task.error.message or "")
    message = zep.thread.message.get(thread.uuid_, bad.messages[0].uuid_)
    assert message.content == "I adopted a cat." and message.processed is False

    llm.default = GOOD
    assert "queued 1" in server.cli("tasks", "retry", bad.task.uuid_)
    assert wait_for_task(zep, bad.task.uuid_) == "succeeded"
    assert zep.thread.message.get(thread.uuid_, bad.messages[0].uuid_).processed is True


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_message_that_cannot_be_read_does_not_strand_the_others(
    llm: FakeLLM, make_app: Callable[..., InProcess], backend: str
) -> None:
    db = None
    if backend == "postgresql":
        db = pg_server.with_schema(pg_server.server_url(), f"l{uuid.uuid4().hex}")
    server = make_app(
        db, env={"GRAPHRECALL_LLM_BASE_URL": llm.url, "GRAPHRECALL_LLM_MAX_RETRIES": "0"}
    )
    zep = server.client()
    user = zep.user.create(first_name="Dana")
    thread = zep.thread.create(user_uuid=user.uuid_)
    llm.refuse = "adopted a cat"
    said = ["I live in Lisbon since 2021.", "I adopted a cat.", "I live in Lisbon, still."]
    added = zep.thread.add_messages(
        thread.uuid_, messages=[AddMessage(role="user", name="Dana", content=t) for t in said]
    )
    assert wait_for_task(zep, added.task.uuid_) == "failed"
    task = zep.task.get(added.task.uuid_)
    assert task.error is not None and "1 episode(s) not processed" in (task.error.message or "")
    processed = {m.content: m.processed for m in zep.thread.list_messages(thread.uuid_)}
    # The two readable messages of the call are processed; the third waits for a retry.
    assert processed == {said[0]: True, said[1]: False, said[2]: True}
    assert any(e.name == "LIVES_IN" for e in zep.graph.edge.list(user.graph_uuid))

    llm.refuse = None
    assert "queued 1" in server.cli("tasks", "retry")
    assert wait_for_task(zep, added.task.uuid_) == "succeeded"
    assert all(m.processed for m in zep.thread.list_messages(thread.uuid_))


def test_with_an_llm_the_same_table_decides(
    llm: FakeLLM, make_app: Callable[..., InProcess]
) -> None:
    """The LLM is asked for the single-valued relations by name and for "past"/"also";
    its facts go through the same decisions as the offline rules' (ingest/single_valued.py)."""
    server = make_app(env={"GRAPHRECALL_LLM_BASE_URL": llm.url})
    zep = server.client()
    user = zep.user.create(first_name="Dana")
    thread = zep.thread.create(user_uuid=user.uuid_)

    def fact(relation: str, target: str, text: str, **more: Any) -> dict[str, Any]:
        return {
            "entities": [{"name": "Dana", "label": "Person"}, {"name": target}],
            "facts": [
                {"source": "Dana", "relation": relation, "target": target, "fact": text, **more}
            ],
        }

    llm.script = [
        fact("LIVES_IN", "Munich", "Dana lives in Munich"),
        fact("MOVES_TO", "Berlin", "Dana moved to Berlin", valid_at="last month"),
        fact("LIVES_IN", "Hamburg", "Dana lived in Hamburg", past=True),
    ]
    for text, at in (
        ("I live in Munich.", "2024-03-01T10:00:00Z"),
        ("I moved to Berlin last month.", "2024-04-20T10:00:00Z"),
        ("I lived in Hamburg.", "2024-04-21T10:00:00Z"),
    ):
        added = zep.thread.add_messages(
            thread.uuid_,
            messages=[AddMessage(role="user", name="Dana", content=text, reference_time=at)],
        )
        assert wait_for_task(zep, added.task.uuid_) == "succeeded"
    prompt = llm.requests[0]["body"]["messages"]
    assert "LIVES_IN, MOVES_TO" in prompt[1]["content"] and '"past": true' in prompt[0]["content"]
    edges = {e.target_node_name: e for e in zep.graph.edge.list(user.graph_uuid)}
    assert edges["Munich"].invalid_at is not None and edges["Munich"].expired_at is not None
    assert edges["Berlin"].invalid_at is None and edges["Berlin"].expired_at is None
    assert (edges["Munich"].attributes or {})["invalidated_by_edge"] == edges["Berlin"].uuid_
    assert edges["Hamburg"].invalid_at is not None  # history, retired nothing
