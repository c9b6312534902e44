"""The served OpenAPI document, made to say what the server does: errors are 400 (not
FastAPI's 422) with the error body every route sends, every route declares the statuses
the middleware and auth can answer, and the Memory Engine RPC and ``/mcp`` (plain ASGI
routes FastAPI cannot describe) are documented by hand.

tests/api/test_schemathesis.py fuzzes the server against this document.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

ERROR_REF = {"$ref": "#/components/schemas/ErrorResponse"}
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "param": {"type": "string"},
                "details": {"type": "object"},
                "request_id": {"type": "string"},
            },
        }
    },
}
# What any route can answer besides its own success: a bad input or parameter (400), a
# missing or wrong key (401), an unknown id (404), a client too slow to send its request
# (408), a body over the size cap (413), the connection cap reached (503).
COMMON_ERRORS = {
    "400": "Bad request: the error names the field in `param`",
    "401": "Missing or invalid API key",
    "404": "Not found",
    "408": "The request was not received in time",
    "413": "The request body is too large",
    "503": "Too many connections",
}
JSON_RPC_REQUEST: dict[str, Any] = {
    "type": "object",
    "required": ["jsonrpc", "method", "id"],
    "properties": {
        "jsonrpc": {"type": "string", "enum": ["2.0"]},
        "method": {"type": "string"},
        "params": {"type": "object"},
        "id": {"oneOf": [{"type": "string"}, {"type": "number"}]},
    },
}
JSON_RPC_RESPONSE: dict[str, Any] = {
    "type": "object",
    "required": ["jsonrpc"],
    "properties": {
        "jsonrpc": {"type": "string"},
        "id": {},
        "result": {},
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {"code": {"type": "integer"}, "message": {"type": "string"}, "data": {}},
        },
    },
}
ME_ERROR: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
        }
    },
}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _memory_rpc() -> dict[str, Any]:
    return {
        "post": {
            "tags": ["memory engine"],
            "summary": "Memory Engine JSON-RPC 2.0",
            "description": (
                "One JSON-RPC 2.0 call (memory.create, memory.search, ...: docs/memory-engine.md)."
                " Auth and space selection are HTTP errors; everything after them is HTTP 200"
                " with a JSON-RPC result or error (-32700, -32600, -32601, -32602, -32000)."
            ),
            "operationId": "memory_rpc",
            "parameters": [
                {
                    "name": "X-Me-Space",
                    "in": "header",
                    "required": True,
                    "schema": {"type": "string"},
                },
                {
                    "name": "X-Client-Version",
                    "in": "header",
                    "required": False,
                    "schema": {"type": "string"},
                },
            ],
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": JSON_RPC_REQUEST}},
            },
            "responses": {
                "200": _json(JSON_RPC_RESPONSE, "A JSON-RPC response"),
                "400": _json(ME_ERROR, "Missing X-Me-Space header"),
                "401": _json(ME_ERROR, "Missing or invalid key, or unknown space"),
                "403": _json(ME_ERROR, "The key's project does not own the space"),
                "408": _json(ERROR_SCHEMA, "The request was not received in time"),
                "413": _json(ME_ERROR, "The request body is over 1 MiB"),
                "426": _json(JSON_RPC_RESPONSE, "The client is older than the minimum"),
                "503": {"description": "Too many connections"},
            },
        }
    }


def _mcp() -> dict[str, Any]:
    statuses = {
        "200": _json(JSON_RPC_RESPONSE, "A JSON-RPC response"),
        "202": {"description": "A notification or response was accepted"},
        "400": {"description": "Malformed JSON-RPC, or a body past the input limits"},
        "401": {"description": "Missing or invalid API key, or unknown space"},
        "403": {"description": "The key's project does not own the space"},
        "404": {"description": "Unknown session"},
        "405": {"description": "Method not allowed in stateless mode"},
        "406": {"description": "The Accept header does not allow a JSON response"},
        "408": {"description": "The request was not received in time"},
        "413": {"description": "The request body is too large"},
        "415": {"description": "The body is not application/json"},
        "503": {"description": "Too many connections"},
    }
    description = (
        "MCP over streamable HTTP (stateless, JSON responses): the Memory Engine tools and"
        " graph tools. `Authorization: Bearer <key>`; `X-Me-Space` (or `?space=`) picks a"
        " space for memory tools."
    )
    body = {"required": True, "content": {"application/json": {"schema": JSON_RPC_REQUEST}}}
    return {
        "post": {
            "tags": ["mcp"],
            "summary": "MCP (streamable HTTP)",
            "description": description,
            "operationId": "mcp_post",
            "requestBody": body,
            "responses": statuses,
        }
    }


def amend(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (FastAPI's document) made honest, in place."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components["ErrorResponse"] = ERROR_SCHEMA
    for name in ("HTTPValidationError", "ValidationError"):
        components.pop(name, None)
    for item in schema.get("paths", {}).values():
        for method, operation in item.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            for parameter in operation.get("parameters", []):
                # Every path id is checked as a UUID (domain.ids.check_uuid: else a 400).
                if parameter.get("in") == "path" and parameter["name"].endswith("_uuid"):
                    parameter["schema"] = {**parameter.get("schema", {}), "format": "uuid"}
            responses = operation.setdefault("responses", {})
            responses.pop("422", None)
            for status, description in COMMON_ERRORS.items():
                responses.setdefault(status, _json(ERROR_REF, description))
    paths = schema.setdefault("paths", {})
    paths["/api/v1/memory/rpc"] = _memory_rpc()
    paths["/mcp"] = _mcp()
    return schema


def install(app: FastAPI) -> None:
    """Amend the document the app builds (after api.docs has added its security
    schemes), once."""
    build = app.openapi
    amended: list[dict[str, Any]] = []

    def openapi() -> dict[str, Any]:
        schema = build()
        if not amended or amended[0] is not schema:
            amended[:] = [amend(schema)]
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
