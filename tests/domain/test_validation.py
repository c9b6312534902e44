"""The input-validation layer, the serialisation guard, overflow-safe timestamps and the
linear-time regex engine, on their own."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta, timezone

import pytest

from graphrecall.domain import clock, limits, safe_regex, validation
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.models import Node


def nested(depth: int) -> dict[str, object]:
    out: dict[str, object] = {}
    cur = out
    for _ in range(depth - 1):
        cur["a"] = {}
        cur = cur["a"]  # type: ignore[assignment]
    return out


def test_loads_names_the_first_bad_value() -> None:
    with pytest.raises(BadRequest) as info:
        validation.loads(b'{"edges": [{"attributes": {"n": 9223372036854775808}}]}')
    assert info.value.param == "edges[0].attributes.n"
    assert validation.loads(b'{"n": 9223372036854775807, "m": -9223372036854775808}')
    for raw in (b'{"x": NaN}', b'{"x": Infinity}', b"[" * 100_000, b"{"):
        with pytest.raises(BadRequest) as info:
            validation.loads(raw)
        assert info.value.param == "body"
    with pytest.raises(BadRequest) as info:
        validation.loads(b'{"x": 1e999}')
    assert info.value.param == "x"


def test_depth_is_capped_where_it_is_crossed() -> None:
    validation.check(nested(limits.MAX_JSON_DEPTH))
    with pytest.raises(BadRequest) as info:
        validation.check({"meta": nested(limits.MAX_JSON_DEPTH)})
    assert str(info.value.param).startswith("meta.a.a")


def test_the_guard_clips_what_cannot_be_serialised() -> None:
    node = Node(
        uuid="u",
        graph_uuid="g",
        name="n",
        created_at="2024-01-01T00:00:00.000000Z",
        updated_at="2024-01-01T00:00:00.000000Z",
        attributes={"deep": nested(400), "big": 10**30, "nan": float("nan"), "ok": 1},
    )
    assert node.attributes is not None
    assert node.attributes["big"] == str(10**30) and node.attributes["nan"] is None
    assert node.attributes["ok"] == 1
    node.model_dump_json()  # a 400-deep value would fail pydantic's serialiser
    fine = {"a": [1, 2.5, "x", None, True]}
    assert validation.clip(fine) is fine  # nothing to clip: no copy


def test_timestamps_are_four_digit_utc_and_overflow_is_a_400() -> None:
    assert clock.normalize("0005-01-01T00:00:00Z", param="t") == "0005-01-01T00:00:00.000000Z"
    assert clock.normalize("0999-12-31T23:00:00-02:00", param="t") == (
        "1000-01-01T01:00:00.000000Z"
    )
    assert clock.normalize("0005-01-01T00:00:00Z", param="t") < "2020"
    for value in ("9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00"):
        with pytest.raises(BadRequest) as info:
            clock.normalize(value, param="valid_at")
        assert info.value.param == "valid_at"
    late = datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=-14)))
    with pytest.raises(BadRequest):
        clock.to_iso(late)
    assert clock.to_iso(datetime(1, 1, 1, tzinfo=UTC)) == "0001-01-01T00:00:00.000000Z"


def test_user_patterns_run_in_linear_time() -> None:
    matcher = safe_regex.compile_user("(a|aa)+$", param="grep")
    started = time.perf_counter()
    for _ in range(100):
        assert matcher.search("a" * 10_000 + "!") is None
    # Python's re takes seconds on 32 characters; RE2 is linear.
    assert time.perf_counter() - started < 1.0
    for pattern in (r"(a)\1", "(?=a)", "(?<!a)b", "(", "x" * 1001):
        with pytest.raises(BadRequest) as info:
            safe_regex.compile_user(pattern, param="grep")
        assert info.value.param == "grep"
    assert safe_regex.compile_user("HELLO", param="g", ignore_case=True).search("say hello")
    assert safe_regex.compile_user("^b", param="g", multi_line=True).search("a\nb")
    assert not safe_regex.compile_user("^b", param="g").search("a\nb")


@pytest.mark.parametrize(
    ("raw", "param", "problem"),
    [
        (b'{"meta": {"a": "x\\ud800"}}', "meta.a", "lone surrogate (U+D800)"),
        (b'{"meta": {"a": ["ok", "\\udfff"]}}', "meta.a[1]", "lone surrogate (U+DFFF)"),
        (b'{"meta": {"k\\udc00": 1}}', "meta.k\\udc00", "key holds a lone surrogate"),
        (b'{"name": "a\\u0000b"}', "name", "NUL character"),
        (b'{"meta": {"a\\u0000": 1}}', "meta.a\\u0000", "key holds a NUL"),
        ('{"name": "é\\u0000"}'.encode(), "name", "NUL character"),
    ],
)
def test_text_that_cannot_be_stored_is_refused_naming_the_field(
    raw: bytes, param: str, problem: str
) -> None:
    with pytest.raises(BadRequest) as info:
        validation.loads(raw)
    assert info.value.param == param
    assert problem in info.value.message
    # The error can itself be written as JSON (no surrogate or NUL is quoted raw).
    error = {"param": info.value.param, "message": info.value.message}
    json.dumps(error, ensure_ascii=False).encode()  # raises on a lone surrogate


def test_paired_surrogates_and_other_text_pass() -> None:
    assert validation.loads(b'{"a": "\\ud83d\\ude00", "\\u00e9": "\\u4e2d"}') == {
        "a": "\U0001f600",
        "é": "中",
    }
    assert validation.text_problem("plain") is None


def test_the_guard_replaces_a_stored_lone_surrogate() -> None:
    clipped = validation.clip({"k\udc00": ["x\ud800", "a\x00"]})
    assert clipped == {"k\ufffd": ["x\ufffd", "a\x00"]}
    json.dumps(clipped, ensure_ascii=False).encode()
