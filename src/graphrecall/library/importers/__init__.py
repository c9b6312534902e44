"""Importers that bring data from elsewhere into a graphrecall database, each a reader of
one source feeding :mod:`graphrecall.library.transfer`'s writers:

- :mod:`~graphrecall.library.importers.chat_exports`: ChatGPT's and Claude's data exports;
- :mod:`~graphrecall.library.importers.zep_source` and :mod:`~graphrecall.library.importers.zep`:
  any Zep v4 server (Zep Cloud, or another graphrecall) read over HTTP;
- :mod:`~graphrecall.library.importers.once`: the writes that make a run idempotent and
  resumable (threads found again by a ``thread_id`` derived from the source, messages and
  episodes already present skipped).
"""

from graphrecall.library.importers.once import ImportProblem

__all__ = ["ImportProblem"]
