"""The Zep Cloud v2 and CE 2.x face under ``/api/v2`` (``zep-cloud`` 1.x/2.x, LangChain's
``ZepCloudChatMessageHistory``, ``zep-python`` 2.x): sessions, memory and their search.

It shares the prefix and the users with the Zep v3 face (``api/zep_v3``), whose id
resolution and shapes it reuses: a session is a v3 thread (docs/migrating-from-zep-v2.md).
Kept apart so each generation's routes are checked against its own reference list.
"""

from __future__ import annotations

from fastapi import APIRouter

from graphrecall.api.zep_v2 import memory, session_search, sessions

ROUTERS: tuple[APIRouter, ...] = (session_search.router, sessions.router, memory.router)
