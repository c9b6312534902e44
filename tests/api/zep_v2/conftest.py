"""The Zep v2 face shares the v3 face's servers (both under /api/v2, one user base) and its
client cache: the fixtures are the v3 tests' own."""

from tests.api.zep_v3.conftest import server, zep_ce_python, zep_v2_langchain

__all__ = ["server", "zep_ce_python", "zep_v2_langchain"]
