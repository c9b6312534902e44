"""``gr.user``, ``gr.thread`` (with ``.message``), ``gr.task``, ``gr.project`` and
``gr.context``: the ``zep_cloud.Zep`` methods of the same names, in process.

Each method checks its arguments into the HTTP face's body model and calls the service
its route calls, converting with the same wire converters (``graphrecall.wire``), so both
faces run the same code (services, conversions, errors) and return the same fields.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

from pydantic import ValidationError

from graphrecall.domain import inputs
from graphrecall.library.calls import OMIT, ListArgs, Pager, body, invalid, listing
from graphrecall.library.session import Part, Session
from graphrecall.services import tasks
from graphrecall.services.get_context import templates as context_templates
from graphrecall.services.get_context.assembly import thread_context
from graphrecall.services.graph import ontology, threads, users
from graphrecall.services.graph.ontology import OntologyIn
from graphrecall.wire.zep_v4 import answers, bodies, wire
from graphrecall.wire.zep_v4 import paging as pages
from graphrecall.wire.zep_v4.context import (
    ContextTemplateWire,
    TemplateBody,
    TemplateListBody,
    ThreadContextResponse,
    template_wire,
)


class UserClient(Part):
    def create(
        self,
        *,
        user_id: str | None = OMIT,
        email: str | None = OMIT,
        first_name: str | None = OMIT,
        last_name: str | None = OMIT,
        metadata: dict[str, Any] | None = OMIT,
        time_zone: str | None = OMIT,
        disable_default_ontology: bool | None = OMIT,
        content_policy: Any = OMIT,
    ) -> wire.UserWire:
        made = body(
            inputs.UserCreate,
            user_id=user_id,
            email=email,
            first_name=first_name,
            last_name=last_name,
            metadata=metadata,
            time_zone=time_zone,
            disable_default_ontology=disable_default_ontology,
            content_policy=content_policy,
        )
        return wire.user(users.create_user(self._ctx, self._project, made))

    def list(
        self,
        *,
        search: str | None = None,
        **args: Unpack[ListArgs],
    ) -> Pager[wire.UserWire]:
        def read(request: Any) -> Any:
            asked = body(bodies.SearchListBody, search=search).search
            found = users.list_users(self._ctx, self._project, request, asked)
            return found, [wire.user(u) for u in found.items]

        return listing(pages.USERS, read, args)

    def lookup(
        self,
        *,
        graph_id: str | None = OMIT,
        thread_id: str | None = OMIT,
        user_id: str | None = OMIT,
    ) -> wire.UserWire:
        ids = body(bodies.LookupBody, graph_id=graph_id, thread_id=thread_id, user_id=user_id)
        found = users.lookup_user(
            self._ctx,
            self._project,
            user_id=ids.user_id,
            graph_id=ids.graph_id,
            thread_id=ids.thread_id,
        )
        return wire.user(found)

    def get(self, user_uuid: str) -> wire.UserWire:
        return wire.user(users.get_user(self._ctx, self._project, user_uuid))

    def delete(self, user_uuid: str) -> wire.AsyncResult:
        return wire.AsyncResult(
            task=wire.task(users.delete_user(self._ctx, self._project, user_uuid))
        )

    def update(
        self,
        user_uuid: str,
        *,
        disable_default_ontology: bool | None = OMIT,
        email: str | None = OMIT,
        first_name: str | None = OMIT,
        last_name: str | None = OMIT,
        metadata: dict[str, Any] | None = OMIT,
        time_zone: str | None = OMIT,
    ) -> wire.UserWire:
        changes = body(
            inputs.UserUpdate,
            disable_default_ontology=disable_default_ontology,
            email=email,
            first_name=first_name,
            last_name=last_name,
            metadata=metadata,
            time_zone=time_zone,
        )
        return wire.user(users.update_user(self._ctx, self._project, user_uuid, changes))

    def get_node(self, user_uuid: str) -> wire.NodeWire:
        return answers.user_node(self._ctx, self._project, user_uuid)


class MessageClient(Part):
    def get(self, thread_uuid: str, message_uuid: str) -> wire.MessageWire:
        found = threads.get_message(self._ctx, self._project, thread_uuid, message_uuid)
        return wire.message(found)

    def update(
        self, thread_uuid: str, message_uuid: str, *, metadata: dict[str, Any] | None = OMIT
    ) -> wire.MessageWire:
        changes = body(inputs.MessageUpdate, metadata=metadata)
        found = threads.update_message(self._ctx, self._project, thread_uuid, message_uuid, changes)
        return wire.message(found)


class ThreadClient(Part):
    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self.message = MessageClient(session)

    def list(
        self,
        *,
        user_uuid: str | None = None,
        **args: Unpack[ListArgs],
    ) -> Pager[wire.ThreadWire]:
        def read(request: Any) -> Any:
            found = threads.list_threads(self._ctx, self._project, request, user_uuid)
            return found, [wire.thread(t) for t in found.items]

        return listing(pages.THREADS, read, args)

    def create(self, *, user_uuid: str) -> wire.ThreadWire:
        made = body(bodies.ThreadCreateBody, user_uuid=user_uuid)
        return wire.thread(threads.create_thread(self._ctx, self._project, made.user_uuid))

    def lookup(
        self,
        *,
        graph_id: str | None = OMIT,
        thread_id: str | None = OMIT,
        user_id: str | None = OMIT,
    ) -> wire.ThreadWire:
        ids = body(bodies.LookupBody, graph_id=graph_id, thread_id=thread_id, user_id=user_id)
        return wire.thread(threads.lookup_thread(self._ctx, self._project, ids.thread_id))

    def get(self, thread_uuid: str) -> wire.ThreadWire:
        return wire.thread(threads.get_thread(self._ctx, self._project, thread_uuid))

    def delete(self, thread_uuid: str) -> wire.AsyncResult:
        found = threads.delete_thread(self._ctx, self._project, thread_uuid)
        return wire.AsyncResult(task=wire.task(found))

    def get_context(
        self, thread_uuid: str, *, template_uuid: str | None = None
    ) -> ThreadContextResponse:
        found = thread_context(self._ctx, self._project, thread_uuid, template_uuid or None)
        return ThreadContextResponse(context=found.text)

    def list_episodes(
        self, thread_uuid: str, *, page_size: int | None = None, cursor: str | None = None
    ) -> Pager[wire.EpisodeWire]:
        def read(request: Any) -> Any:
            return answers.thread_episodes(self._ctx, self._project, thread_uuid, request)

        return listing(pages.THREAD_EPISODES, read, {"page_size": page_size, "cursor": cursor})

    def list_messages(
        self,
        thread_uuid: str,
        **args: Unpack[ListArgs],
    ) -> Pager[wire.MessageWire]:
        def read(request: Any) -> Any:
            found = threads.list_messages(self._ctx, self._project, thread_uuid, request)
            return found, [wire.message(m) for m in found.items]

        return listing(pages.MESSAGES, read, args)

    def add_messages(
        self,
        thread_uuid: str,
        *,
        messages: Sequence[Any],
        ignore_roles: Sequence[str] | None = OMIT,
        return_context: bool | None = OMIT,
        strict_ontology: bool | None = OMIT,
    ) -> wire.AddMessagesResult:
        added = body(
            inputs.MessagesAdd,
            messages=list(messages),
            ignore_roles=None if ignore_roles in (None, OMIT) else list(ignore_roles),
            return_context=return_context,
            strict_ontology=strict_ontology,
        )
        return answers.add_messages(self._ctx, self._project, thread_uuid, added)

    def get_summary(self, thread_uuid: str) -> wire.ThreadSummaryWire:
        return answers.thread_summary(self._ctx, self._project, thread_uuid)


class TaskClient(Part):
    def list(
        self,
        *,
        page_size: int | None = None,
        cursor: str | None = None,
        status: str | None = None,
        type: str | None = None,
    ) -> Pager[wire.TaskWire]:
        def read(request: Any) -> Any:
            found = tasks.list_tasks(
                self._ctx, self._project.uuid, request, status=status, type_=type
            )
            return found, [wire.task(t) for t in found.items]

        return listing(pages.TASKS, read, {"page_size": page_size, "cursor": cursor})

    def get(self, task_uuid: str) -> wire.TaskWire:
        return wire.task(tasks.get_task(self._ctx, self._project.uuid, task_uuid))


class ProjectClient(Part):
    def get(self) -> wire.ProjectWire:
        return wire.project(self._project)

    def update(
        self,
        *,
        default_time_zone: str | None = OMIT,
        hyperedges_enabled: bool | None = OMIT,
        include_policy_violating_episodes: bool | None = OMIT,
    ) -> wire.ProjectWire:
        fields: dict[str, Any] = {
            "hyperedges_enabled": hyperedges_enabled,
            "include_policy_violating_episodes": include_policy_violating_episodes,
        }
        if default_time_zone is not OMIT:  # None clears it, as the SDK's null does
            fields["default_time_zone"] = default_time_zone
        try:
            changes = bodies.ProjectUpdateBody.model_validate(
                {k: v for k, v in fields.items() if v is not OMIT}
            )
        except ValidationError as exc:
            raise invalid(exc) from None
        updated = wire.project(answers.update_project(self._ctx, self._project, changes))
        self._s.reload_project()
        return updated

    def get_ontology(self) -> Any:
        return ontology.get_project_ontology(self._ctx, self._project)

    def set_ontology(self, **fields: Any) -> Any:
        asked = body(OntologyIn, **fields)
        return ontology.set_project_ontology(self._ctx, self._project, asked)


class ContextClient(Part):
    """Context templates (``client.context`` in the SDK)."""

    def create_template(
        self, *, name: str | None = OMIT, template: str | None = OMIT
    ) -> ContextTemplateWire:
        made = body(TemplateBody, name=name, template=template)
        found = context_templates.create_template(
            self._ctx, self._project, made.name, made.template
        )
        return template_wire(found)

    def list_templates(
        self, *, page_size: int | None = None, cursor: str | None = None, name: str | None = None
    ) -> Pager[ContextTemplateWire]:
        def read(request: Any) -> Any:
            asked = body(TemplateListBody, name=name).name
            found = context_templates.list_templates(self._ctx, self._project, request, asked)
            return found, [template_wire(t) for t in found.items]

        return listing(pages.TEMPLATES, read, {"page_size": page_size, "cursor": cursor})

    def get_template(self, template_uuid: str) -> ContextTemplateWire:
        return template_wire(
            context_templates.get_template(self._ctx, self._project, template_uuid)
        )

    def update_template(
        self, template_uuid: str, *, name: str | None = OMIT, template: str | None = OMIT
    ) -> ContextTemplateWire:
        changes = body(TemplateBody, name=name, template=template)
        found = context_templates.update_template(
            self._ctx, self._project, template_uuid, changes.name, changes.template
        )
        return template_wire(found)

    def delete_template(self, template_uuid: str) -> None:
        context_templates.delete_template(self._ctx, self._project, template_uuid)
