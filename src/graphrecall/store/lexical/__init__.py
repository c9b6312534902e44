"""Lexical ranking independent of storage: BM25 (``bm25.py``), which of a query's rows
are ranked (``plan.py``) and an in-memory copy of a table's postings that ranks them in
numpy (``postings.py``). A backend supplies candidates, postings and statistics; the
scores are computed here, so every backend and every path ranks the same."""
