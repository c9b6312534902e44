"""``gr.user``, ``gr.thread`` (with ``.message``), ``gr.task``, ``gr.project`` and
``gr.context``: the ``zep_cloud.Zep`` methods of the same names, in process.

Each method calls the route handler that the SDK method reaches over HTTP, with this
instance's services context and project, so both run the same code (services,
conversions, errors) and return the same fields.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from graphrecall.api.zep_v4 import bodies, context, ontology, tasks, threads, users, wire
from graphrecall.api.zep_v4.context import ContextTemplateWire, ThreadContextResponse
from graphrecall.domain import inputs
from graphrecall.library.calls import OMIT, Pager, body, invalid, page, pager, result

if TYPE_CHECKING:
    from graphrecall.library.client import GraphRecall


class Part:
    """A group of methods (``gr.user``, ``gr.graph.edge``, ...) of one :class:`GraphRecall`."""

    def __init__(self, gr: GraphRecall) -> None:
        self._gr = gr

    def _call(self, handler: Any, *args: Any, **kwargs: Any) -> Any:
        return handler(*args, ctx=self._gr._context, project=self._gr._project, **kwargs)


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
        return result(wire.UserWire, self._call(users.create_user, made))

    def list(
        self,
        *,
        page_size: int | None = None,
        cursor: str | None = None,
        order_by: str | None = None,
        order: str | None = None,
        search: str | None = None,
    ) -> Pager[wire.UserWire]:
        request = page(users._paging, page_size, cursor, order_by, order)
        search_body = body(bodies.SearchListBody, search=search)
        found = self._call(users.list_users, search_body, request)
        return pager(
            wire.UserWire,
            found,
            lambda c: self.list(
                page_size=page_size, cursor=c, order_by=order_by, order=order, search=search
            ),
        )

    def lookup(
        self,
        *,
        graph_id: str | None = OMIT,
        thread_id: str | None = OMIT,
        user_id: str | None = OMIT,
    ) -> wire.UserWire:
        ids = body(bodies.LookupBody, graph_id=graph_id, thread_id=thread_id, user_id=user_id)
        return result(wire.UserWire, self._call(users.lookup_user, ids))

    def get(self, user_uuid: str) -> wire.UserWire:
        return result(wire.UserWire, self._call(users.get_user, user_uuid))

    def delete(self, user_uuid: str) -> wire.AsyncResult:
        return result(wire.AsyncResult, self._call(users.delete_user, user_uuid))

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
        return result(wire.UserWire, self._call(users.update_user, user_uuid, changes))

    def get_node(self, user_uuid: str) -> wire.NodeWire:
        return result(wire.NodeWire, self._call(users.get_user_node, user_uuid))


class MessageClient(Part):
    def get(self, thread_uuid: str, message_uuid: str) -> wire.MessageWire:
        return result(wire.MessageWire, self._call(threads.get_message, thread_uuid, message_uuid))

    def update(
        self, thread_uuid: str, message_uuid: str, *, metadata: dict[str, Any] | None = OMIT
    ) -> wire.MessageWire:
        changes = body(inputs.MessageUpdate, metadata=metadata)
        found = self._call(threads.update_message, thread_uuid, message_uuid, changes)
        return result(wire.MessageWire, found)


class ThreadClient(Part):
    def __init__(self, gr: GraphRecall) -> None:
        super().__init__(gr)
        self.message = MessageClient(gr)

    def list(
        self,
        *,
        page_size: int | None = None,
        cursor: str | None = None,
        order_by: str | None = None,
        order: str | None = None,
        user_uuid: str | None = None,
    ) -> Pager[wire.ThreadWire]:
        request = page(threads._paging, page_size, cursor, order_by, order)
        found = self._call(threads.list_threads, user_uuid, request)
        return pager(
            wire.ThreadWire,
            found,
            lambda c: self.list(
                page_size=page_size, cursor=c, order_by=order_by, order=order, user_uuid=user_uuid
            ),
        )

    def create(self, *, user_uuid: str) -> wire.ThreadWire:
        made = body(bodies.ThreadCreateBody, user_uuid=user_uuid)
        return result(wire.ThreadWire, self._call(threads.create_thread, made))

    def lookup(
        self,
        *,
        graph_id: str | None = OMIT,
        thread_id: str | None = OMIT,
        user_id: str | None = OMIT,
    ) -> wire.ThreadWire:
        ids = body(bodies.LookupBody, graph_id=graph_id, thread_id=thread_id, user_id=user_id)
        return result(wire.ThreadWire, self._call(threads.lookup_thread, ids))

    def get(self, thread_uuid: str) -> wire.ThreadWire:
        return result(wire.ThreadWire, self._call(threads.get_thread, thread_uuid))

    def delete(self, thread_uuid: str) -> wire.AsyncResult:
        return result(wire.AsyncResult, self._call(threads.delete_thread, thread_uuid))

    def get_context(
        self, thread_uuid: str, *, template_uuid: str | None = None
    ) -> ThreadContextResponse:
        found = self._call(context.get_thread_context, thread_uuid, template_uuid)
        return result(ThreadContextResponse, found)

    def list_episodes(
        self, thread_uuid: str, *, page_size: int | None = None, cursor: str | None = None
    ) -> Pager[wire.EpisodeWire]:
        request = page(threads._episode_paging, page_size, cursor)
        found = self._call(threads.list_thread_episodes, thread_uuid, request)
        return pager(
            wire.EpisodeWire,
            found,
            lambda c: self.list_episodes(thread_uuid, page_size=page_size, cursor=c),
        )

    def list_messages(
        self,
        thread_uuid: str,
        *,
        page_size: int | None = None,
        cursor: str | None = None,
        order_by: str | None = None,
        order: str | None = None,
    ) -> Pager[wire.MessageWire]:
        request = page(threads._message_paging, page_size, cursor, order_by, order)
        found = self._call(threads.list_messages, thread_uuid, request)
        return pager(
            wire.MessageWire,
            found,
            lambda c: self.list_messages(
                thread_uuid, page_size=page_size, cursor=c, order_by=order_by, order=order
            ),
        )

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
        return result(wire.AddMessagesResult, self._call(threads.add_messages, thread_uuid, added))

    def get_summary(self, thread_uuid: str) -> wire.ThreadSummaryWire:
        return result(wire.ThreadSummaryWire, self._call(ontology.get_thread_summary, thread_uuid))


class TaskClient(Part):
    def list(
        self,
        *,
        page_size: int | None = None,
        cursor: str | None = None,
        status: str | None = None,
        type: str | None = None,
    ) -> Pager[wire.TaskWire]:
        request = page(tasks._paging, page_size, cursor)
        found = self._call(tasks.list_tasks, status, type, request)
        return pager(
            wire.TaskWire,
            found,
            lambda c: self.list(page_size=page_size, cursor=c, status=status, type=type),
        )

    def get(self, task_uuid: str) -> wire.TaskWire:
        return result(wire.TaskWire, self._call(tasks.get_task, task_uuid))


class ProjectClient(Part):
    def get(self) -> wire.ProjectWire:
        return result(wire.ProjectWire, tasks.get_project(project=self._gr._project))

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
        updated = result(wire.ProjectWire, self._call(tasks.update_project, changes))
        self._gr._reload_project()
        return updated

    def get_ontology(self) -> Any:
        return self._call(ontology.get_project_ontology)

    def set_ontology(self, **fields: Any) -> Any:
        from graphrecall.services.graph.ontology import OntologyIn

        return self._call(ontology.set_project_ontology, body(OntologyIn, **fields))


class ContextClient(Part):
    """Context templates (``client.context`` in the SDK)."""

    def create_template(
        self, *, name: str | None = OMIT, template: str | None = OMIT
    ) -> ContextTemplateWire:
        made = body(context.TemplateBody, name=name, template=template)
        return result(ContextTemplateWire, self._call(context.create_template, made))

    def list_templates(
        self, *, page_size: int | None = None, cursor: str | None = None, name: str | None = None
    ) -> Pager[ContextTemplateWire]:
        request = page(context._paging, page_size, cursor)
        found = self._call(
            context.list_templates, body(context.TemplateListBody, name=name), request
        )
        return pager(
            ContextTemplateWire,
            found,
            lambda c: self.list_templates(page_size=page_size, cursor=c, name=name),
        )

    def get_template(self, template_uuid: str) -> ContextTemplateWire:
        return result(ContextTemplateWire, self._call(context.get_template, template_uuid))

    def update_template(
        self, template_uuid: str, *, name: str | None = OMIT, template: str | None = OMIT
    ) -> ContextTemplateWire:
        changes = body(context.TemplateBody, name=name, template=template)
        found = self._call(context.update_template, template_uuid, changes)
        return result(ContextTemplateWire, found)

    def delete_template(self, template_uuid: str) -> None:
        self._call(context.delete_template, template_uuid)
