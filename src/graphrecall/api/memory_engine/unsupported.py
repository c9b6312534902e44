"""Memory Engine methods with no meaning in graphrecall, and why.

graphrecall has no user accounts, groups or per-tree grants: a project's API keys are
its principals, and every live key has owner access to every space of its project. The
``me`` client calls these methods for its account and sharing commands; each answers a
JSON-RPC error that says so (see ``rpc.not_found``), never a bare 404.
"""

from __future__ import annotations

_ACCESS = (
    "graphrecall has no per-tree grants, groups or members; every API key of the"
    " project has owner access to every space of the project (see access.effective)"
)
_INVITES = (
    "graphrecall has no user accounts to invite; give a person an API key of the"
    " project instead (apiKey.create, or `graphrecall keys create`)"
)
_SERVICE = (
    "graphrecall's API keys are its principals; create a key with apiKey.create"
    " or `graphrecall keys create`"
)

UNSUPPORTED: dict[str, str] = {
    **{f"grant.{m}": _ACCESS for m in ("list", "set", "remove")},
    **{
        f"group.{m}": _ACCESS
        for m in (
            "list",
            "create",
            "rename",
            "delete",
            "addMember",
            "removeMember",
            "listMembers",
            "listForMember",
            "setIsSpaceAdmin",
        )
    },
    **{f"principal.{m}": _ACCESS for m in ("list", "add", "remove", "lookup", "resolve")},
    **{
        f"invite.{m}": _INVITES
        for m in (
            "create",
            "list",
            "revoke",
            "revokeById",
            "pending",
            "accept",
            "decline",
            "redeem",
        )
    },
    **{f"serviceAccount.{m}": _SERVICE for m in ("create", "list", "rename", "delete")},
    "space.delete": (
        "deleting a space with its memories is not built; remove its memories with"
        " memory.deleteTree"
    ),
}
