"""What the v3 routes share (api/zep_v3/common.py): query parameters as old clients send
them, and v4 errors re-named as v3 names the field."""

from __future__ import annotations

import pytest

from graphrecall.api.zep_v3.common import bool_param, int_param, v3_fields
from graphrecall.domain.errors import BadRequest, NotFound


def test_empty_parameters_are_absent_and_bad_ones_name_themselves() -> None:
    assert int_param("", "lastn", ge=1) is None and int_param(None, "lastn", ge=1) is None
    assert int_param(" 7 ", "lastn", ge=1) == 7
    assert bool_param("", "asc") is None and bool_param("true", "asc") is True
    for raw, ge, le in (("x", 1, None), ("0", 1, None), ("101", 1, 100)):
        with pytest.raises(BadRequest) as caught:
            int_param(raw, "lastn", ge=ge, le=le)
        assert caught.value.param == "lastn"


def test_an_error_names_the_v3_field_and_keeps_its_kind() -> None:
    with pytest.raises(BadRequest) as caught, v3_fields({r"^name$": "template_id"}):
        raise BadRequest("a context template named 'x' exists already", param="name")
    assert caught.value.param == "template_id"
    assert caught.value.message == "a context template named 'x' exists already"
    with pytest.raises(NotFound) as missing, v3_fields({r"^batch_uuid$": "batch_id"}):
        raise NotFound("batch", "b1", param="batch_uuid")
    assert missing.value.param == "batch_id"
    with pytest.raises(BadRequest) as nested, v3_fields({r"\.reference_time$": ".created_at"}):
        raise BadRequest(
            "messages[2].reference_time is not a time", param="messages[2].reference_time"
        )
    assert nested.value.param == "messages[2].created_at"
    assert nested.value.message == "messages[2].created_at is not a time"
