"""Zep Cloud v2 / CE 2.x request bodies, and their translation into v4 inputs.

Old clients send unset fields as explicit ``null`` (zep-cloud 1.0.9: ``"metadata":
null``): every optional field here takes one. What graphrecall cannot keep (a session's
metadata, a fact-rating instruction, per-call fact or summary instructions) is refused
with a 400 naming the field when it is given, never accepted and dropped."""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import Field, ValidationError

from graphrecall.api.zep_v3.payloads import DeveloperId
from graphrecall.domain import limits
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.inputs import MessageCreate, MessagesAdd
from graphrecall.domain.models import Role
from graphrecall.wire.zep_v4.bodies import Body

ROLES: tuple[str, ...] = get_args(Role)
# v4 message fields by their v2 names.
V2_NAMES = {"name": "role", "role": "role_type", "reference_time": "created_at"}
SearchScope = Literal["messages", "facts", "summary"]


def refuse_given(body: Body, fields: tuple[str, ...], why: str) -> None:
    """A 400 naming the first of ``fields`` that ``body`` gives a value (not null, not
    empty): graphrecall has nowhere to keep it (``why``)."""
    for name in fields:
        if getattr(body, name, None) not in (None, {}, "", []):
            raise BadRequest(f"{name} is not supported by graphrecall: {why}", param=name)


class SessionCreateV2(Body):
    session_id: DeveloperId
    user_id: str | None = None
    metadata: dict[str, Any] | None = None
    fact_rating_instruction: dict[str, Any] | None = None


class SessionUpdateV2(Body):
    metadata: dict[str, Any] | None = None
    fact_rating_instruction: dict[str, Any] | None = None


SESSION_UNKEPT = ("metadata", "fact_rating_instruction")
SESSION_WHY = "a session is a v4 thread, which has no metadata and no fact-rating instruction"


class MessageV2In(Body):
    """v2's message: ``role`` is the speaker's label, ``role_type`` the role."""

    role: str | None = None
    role_type: str | None = None
    content: str
    metadata: dict[str, Any] | None = None
    created_at: str | None = None

    def as_v4(self, i: int) -> MessageCreate:
        role = self.role_type
        if role in (None, "", "norole") and self.role in ROLES:
            role = self.role  # CE clients that set only role: "user"
        if role not in ROLES:
            raise BadRequest(
                f"messages[{i}].role_type must be one of {', '.join(ROLES)}; got {role!r}",
                param=f"messages[{i}].role_type",
            )
        try:
            return MessageCreate.model_validate(
                {
                    "role": role,
                    "name": self.role if self.role and self.role != role else None,
                    "content": self.content,
                    "metadata": self.metadata,
                    "reference_time": self.created_at,
                }
            )
        except ValidationError as exc:  # a 400 naming the field as v2 spells it
            error = exc.errors()[0]
            field = V2_NAMES.get(str(error["loc"][0]), str(error["loc"][0]))
            path = f"messages[{i}].{field}"
            raise BadRequest(f"{path}: {error['msg']}", param=path) from None


class MemoryAddV2(Body):
    messages: list[MessageV2In] = Field(min_length=1, max_length=limits.MAX_MESSAGES_PER_CALL)
    fact_instruction: str | None = None
    summary_instruction: str | None = None
    return_context: bool | None = None
    ignore_roles: list[Role] | None = None

    def as_v4(self) -> MessagesAdd:
        refuse_given(
            self,
            ("fact_instruction", "summary_instruction"),
            "instructions are set per user (v4 user summary instructions), not per call",
        )
        return MessagesAdd(
            messages=[m.as_v4(i) for i, m in enumerate(self.messages)],
            ignore_roles=self.ignore_roles,
        )


class MemorySearchV2(Body):
    """``memory.search`` (one session) and ``memory.search_sessions`` (many)."""

    text: str | None = Field(default=None, max_length=8192)
    search_scope: SearchScope | None = None
    search_type: Literal["similarity", "mmr"] | None = None
    mmr_lambda: float | None = Field(default=None, ge=0.0, le=1.0)
    min_score: float | None = None
    min_fact_rating: float | None = None
    metadata: dict[str, Any] | None = None
    record_filter: dict[str, Any] | None = None
    user_id: str | None = None
    session_ids: list[str] | None = Field(default=None, max_length=limits.MAX_UUID_LIST)

    def query(self) -> str:
        if not self.text or not self.text.strip():
            raise BadRequest("text must not be empty", param="text")
        return self.text

    def check(self) -> None:
        refuse_given(
            self,
            ("metadata", "record_filter"),
            "v2 metadata filters are not translated; search by text",
        )
