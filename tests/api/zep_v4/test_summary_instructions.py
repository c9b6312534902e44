"""User summary instructions through the SDK: project and per-user, inheritance, limits,
and the summary they steer (rendered first in the user's context)."""

from __future__ import annotations

import pytest
from zep_cloud import AddMessage, UserInstruction, Zep
from zep_cloud.errors import BadRequestError, NotFoundError

from tests.conftest import wait_for_task

SAID = [
    "I bought a red bicycle last week.",
    "I adopted a kitten named Miso.",
    "I work as a pharmacist in Leeds.",
    "I am allergic to peanuts.",
    "I joined a climbing gym downtown.",
    "I visited my sister in Dublin.",
    "I started learning the cello.",
    "I moved into a flat near the river.",
    "I bought a blue kayak for the summer.",
    "I met my friend Tariq at the museum.",
    "I planted tomatoes in my garden.",
    "I booked a trip to Lisbon.",
]


def test_instructions_steer_the_user_summary(zep: Zep) -> None:
    user = zep.user.create(first_name="Noor")
    thread = zep.thread.create(user_uuid=user.uuid_)
    added = zep.thread.add_messages(
        thread.uuid_,
        messages=[AddMessage(role="user", name="Noor", content=text) for text in SAID],
    )
    assert wait_for_task(zep, added.task.uuid_) == "succeeded"
    before = zep.user.get_node(user.uuid_).summary or ""
    assert "allergic" not in before  # six newest facts: the allergy is older

    # A user without instructions of its own follows the project's.
    got = zep.user.get_summary_instructions(user.uuid_)
    assert got.inherited is True
    set_ = zep.user.set_summary_instructions(
        user.uuid_,
        instructions=[UserInstruction(name="health", text="Allergies and medical conditions")],
    )
    assert set_.inherited is False and [i.name for i in set_.instructions or []] == ["health"]
    after = zep.user.get_node(user.uuid_).summary or ""
    assert "allergic" in after.lower() and "peanut" in after.lower()
    context = zep.thread.get_context(thread.uuid_).context or ""
    assert "peanut" in context.lower()

    # inherited=true drops the user's own: the project's (none here) apply again.
    back = zep.user.set_summary_instructions(user.uuid_, inherited=True)
    assert back.inherited is True
    assert zep.user.get_summary_instructions(user.uuid_).inherited is True


def test_project_instructions_and_limits(zep: Zep) -> None:
    project = zep.project.set_user_summary_instructions(
        instructions=[UserInstruction(name="pets", text="Pets and animals")]
    )
    assert [i.text for i in project.instructions or []] == ["Pets and animals"]
    assert zep.project.get_user_summary_instructions().inherited is False
    user = zep.user.create(first_name="Ola")
    inherited = zep.user.get_summary_instructions(user.uuid_)
    assert inherited.inherited is True
    assert [i.name for i in inherited.instructions or []] == ["pets"]
    zep.project.set_user_summary_instructions(instructions=[])

    with pytest.raises(BadRequestError) as info:
        zep.user.set_summary_instructions(
            user.uuid_, instructions=[UserInstruction(name="x", text="y" * 101)]
        )
    assert info.value.body.error.param == "instructions[0].text"
    with pytest.raises(BadRequestError) as info:
        zep.project.set_user_summary_instructions(
            instructions=[UserInstruction(name=f"n{i}", text="t") for i in range(6)]
        )
    assert info.value.body.error.param == "instructions"
    with pytest.raises(NotFoundError):
        zep.user.get_summary_instructions("0190e3c2-0000-7000-8000-000000000000")
