"""The Memory Engine account face: ``POST /api/v1/user/rpc`` (JSON-RPC 2.0), what the
``me`` client calls for ``me whoami``, ``me space …`` and ``me apikey …``.

Mapped onto graphrecall's own tenancy: the caller is an API key of a project; its
spaces are the project's spaces, its API keys the project's keys (every one with owner
access to every space, so none is "restricted"). Methods with no meaning here (service
accounts, invitations) answer a JSON-RPC error saying so (``unsupported.py``). No
``X-Me-Space`` header is needed: these calls are about the account, not one space.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from graphrecall.api.deps import api_key_from, get_ctx
from graphrecall.api.memory_engine import rpc
from graphrecall.domain.errors import BadRequest, GraphRecallError, NotFound
from graphrecall.domain.models import ApiKey, Project, Space
from graphrecall.services.accounts import projects, spaces
from graphrecall.services.container import Services
from graphrecall.wire.memory_engine.wire import timestamp

router = APIRouter(tags=["memory engine"])


@dataclass(frozen=True)
class Account:
    """Who calls: a live API key and its project."""

    project: Project
    key: ApiKey


class Params(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Empty(Params):
    pass


class SpaceCreate(Params):
    # ``autoGrantHome`` and the ``defaultGroup*`` options are accepted and have no
    # effect: there are no grants or groups, every key of the project owns the space.
    name: Annotated[str, Field(min_length=1, max_length=200)]


class SpaceRename(Params):
    slug: str
    name: Annotated[str, Field(min_length=1, max_length=200)]


class KeyList(Params):
    memberId: str | None = None


class KeyCreate(Params):
    memberId: str | None = None
    name: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    expiresAt: str | None = None
    access: list[Any] | None = None


class KeyById(Params):
    id: str


# -- wire shapes --------------------------------------------------------------------------


def space_wire(space: Space) -> dict[str, Any]:
    return {
        "id": space.uuid,
        "slug": space.slug,
        "name": space.name,
        "admin": True,  # every key of the project may do anything in the space
        "createdAt": timestamp(space.created_at),
        "defaultGroup": None,
    }


def key_wire(key: ApiKey) -> dict[str, Any]:
    return {
        "id": key.uuid,
        "name": key.name or key.prefix,
        "prefix": key.prefix,
        "memberId": key.project_uuid,
        "restricted": False,
        "createdAt": timestamp(key.created_at),
        "expiresAt": None,
        "lastUsedOn": None,
    }


# -- methods ------------------------------------------------------------------------------


def whoami(ctx: Services, account: Account, p: Empty) -> Any:
    """The key is the principal ("s", as a service account: no person, no email)."""
    key = account.key
    return {
        "id": key.uuid,
        "name": key.name or key.prefix,
        "kind": "s",
        "email": None,
        "project": {"id": account.project.uuid, "name": account.project.name},
    }


def space_list(ctx: Services, account: Account, p: Empty) -> Any:
    return {"spaces": [space_wire(s) for s in spaces.project_spaces(ctx.store, account.project)]}


def space_create(ctx: Services, account: Account, p: SpaceCreate) -> Any:
    return space_wire(spaces.create_space(ctx.store, account.project, p.name))


def space_ensure_default(ctx: Services, account: Account, p: Empty) -> Any:
    existing = spaces.project_spaces(ctx.store, account.project)
    if existing:
        return {"created": False, "space": space_wire(existing[0])}
    return {
        "created": True,
        "space": space_wire(spaces.create_space(ctx.store, account.project, "default")),
    }


def space_rename(ctx: Services, account: Account, p: SpaceRename) -> Any:
    renamed = spaces.rename_space(ctx.store, account.project, p.slug, p.name)
    return {"renamed": True, "space": space_wire(renamed)}


def _check_member(account: Account, member: str | None, keys: list[ApiKey]) -> None:
    """A member is the project (a key's ``memberId``) or one of its keys (``whoami``'s id):
    keys belong to the project here, not to a person."""
    if member is None or member == account.project.uuid or any(k.uuid == member for k in keys):
        return
    raise NotFound("member", member, param="memberId")


def key_list(ctx: Services, account: Account, p: KeyList) -> Any:
    keys = projects.project_keys(ctx.store, account.project)
    _check_member(account, p.memberId, keys)
    return {"apiKeys": [key_wire(k) for k in keys]}


def key_create(ctx: Services, account: Account, p: KeyCreate) -> Any:
    if p.expiresAt is not None:
        raise BadRequest(
            "keys that expire are not supported by graphrecall; revoke a key instead",
            param="expiresAt",
        )
    if p.access:
        raise BadRequest(
            "restricted keys are not supported by graphrecall: every key of the project"
            " has owner access to every space",
            param="access",
        )
    _check_member(account, p.memberId, projects.project_keys(ctx.store, account.project))
    secret = projects.create_key(ctx.store, account.project, name=p.name)
    created = projects.key_record(ctx.store, secret)
    return {**key_wire(created), "key": secret}


def _own_key(ctx: Services, account: Account, key_id: str) -> ApiKey | None:
    found = [k for k in projects.project_keys(ctx.store, account.project) if k.uuid == key_id]
    return found[0] if found else None


def key_get(ctx: Services, account: Account, p: KeyById) -> Any:
    key = _own_key(ctx, account, p.id)
    return {"apiKey": key_wire(key) if key else None, "access": []}


def key_delete(ctx: Services, account: Account, p: KeyById) -> Any:
    """Revokes the key; an unknown id (or one of another project) is ``deleted: false``,
    as upstream answers."""
    key = _own_key(ctx, account, p.id)
    if key is None:
        return {"deleted": False}
    projects.revoke_key(ctx.store, key.uuid)
    ctx.recent_keys.clear()  # refuse it at once in this process
    return {"deleted": True}


@dataclass(frozen=True)
class Method:
    params: type[BaseModel]
    handler: Callable[[Services, Account, Any], Any]


METHODS: dict[str, Method] = {
    "whoami": Method(Empty, whoami),
    "space.list": Method(Empty, space_list),
    "space.create": Method(SpaceCreate, space_create),
    "space.ensureDefault": Method(Empty, space_ensure_default),
    "space.rename": Method(SpaceRename, space_rename),
    "apiKey.list": Method(KeyList, key_list),
    "apiKey.create": Method(KeyCreate, key_create),
    "apiKey.get": Method(KeyById, key_get),
    "apiKey.delete": Method(KeyById, key_delete),
}


def call(ctx: Services, account: Account, method: str, params: Any) -> Any:
    spec = METHODS.get(method)
    if spec is None:
        raise rpc.not_found(method)
    parsed = rpc.parse_params(spec.params, params)
    try:
        return spec.handler(ctx, account, parsed)
    except GraphRecallError as exc:
        raise rpc.app_error(exc) from None


@router.post("/api/v1/user/rpc")
async def user_rpc(request: Request) -> JSONResponse:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > rpc.MAX_BODY_BYTES:
        return rpc.too_large()
    raw = await request.body()
    if len(raw) > rpc.MAX_BODY_BYTES:
        return rpc.too_large()
    key = api_key_from(request.headers.get("authorization"))
    if not key:
        return rpc.http_error(401, "UNAUTHORIZED", "Authentication required (Authorization header)")
    return await run_in_threadpool(_serve, get_ctx(request), key, raw)


def _serve(ctx: Services, key: str, raw: bytes) -> JSONResponse:
    try:
        project = ctx.recent_keys.authenticate(ctx.store, key)
        account = Account(project, projects.key_record(ctx.store, key))
    except GraphRecallError as exc:
        return rpc.http_error(401, "UNAUTHORIZED", exc.message)
    return JSONResponse(rpc.respond(raw, lambda method, params: call(ctx, account, method, params)))
