"""The context template language: variables, parameters, defaults and errors."""

from __future__ import annotations

import pytest

from graphrecall.domain.errors import BadRequest
from graphrecall.services.get_context.templates import DEFAULT_LIMITS, Slot, parse


def test_text_and_variables() -> None:
    parts = parse(
        "# FACTS\n%{edges limit=4 types=[WORKS_AT, LIVES_IN]}\n100%% sure %{user_summary}"
    )
    assert parts == [
        "# FACTS\n",
        Slot("edges", 4, ("WORKS_AT", "LIVES_IN")),
        "\n100% sure ",
        Slot("user_summary", 1),
    ]


def test_defaults_aliases_and_caps() -> None:
    assert parse("%{facts}") == [Slot("edges", DEFAULT_LIMITS["edges"])]
    assert parse("%{nodes include_attributes=true}") == [
        Slot("entities", DEFAULT_LIMITS["entities"], include_attributes=True)
    ]
    # observations and thread summaries are capped at 20 per render
    assert parse("%{observations limit=200}") == [Slot("observations", 20)]
    assert parse("%{thread_summaries limit=3}") == [Slot("thread_summaries", 3)]
    assert parse("%{ENTITIES limit=200 types=[Person]}") == [Slot("entities", 200, ("Person",))]


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("%{edges", "never closed"),
        ("%{edges %{entities}}", "never closed"),
        ("%{}", "empty variable"),
        ("%{memories}", "unknown variable %{memories}"),
        ("%{edges limit=0}", "limit must be an integer from 1 to 200"),
        ("%{edges limit=201}", "limit must be an integer from 1 to 200"),
        ("%{edges limit=ten}", "limit must be an integer"),
        ("%{observations types=[A]}", "does not take types"),
        ("%{user_summary limit=2}", "does not take limit"),
        ("%{edges types=A}", "types must look like [A,B]"),
        ("%{edges types=[]}", "types must list one or more"),
        ("%{edges include_attributes=yes}", "include_attributes must be true or false"),
        ("%{edges limit=2 limit=3}", "sets limit twice"),
        ("%{edges limit}", "cannot read the parameters"),
        # What one render may cost (issue 47, item 7).
        ("%{episodes limit=1}" * 21, "21 variables; a template holds at most 20"),
        ("%{edges limit=150} %{entities limit=51}", "limits add up to 201; at most 200"),
    ],
)
def test_errors_name_the_template_and_say_what_is_wrong(template: str, message: str) -> None:
    with pytest.raises(BadRequest) as info:
        parse(template)
    assert info.value.param == "template"
    assert message in info.value.message
