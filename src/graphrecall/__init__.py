"""graphrecall: a self-hosted memory and context-graph server for AI agents.

It speaks the Zep v4 REST API (so the official ``zep-cloud`` SDK works against it
unchanged) and runs offline by default: embedded SQLite, bundled ONNX embedder.
"""

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphrecall.library import GraphRecall

# Exact vector search multiplies one query vector by a graph's matrix: memory-bound work
# that a second BLAS thread slows down (it competes with the search's other leg) and that
# pays thread start-up on small searches. Set before numpy loads; an explicit
# OPENBLAS_NUM_THREADS from the environment wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
__all__ = ["GraphRecall", "__version__"]


def __getattr__(name: str) -> Any:
    """``GraphRecall`` loads on first use: ``graphrecall --help`` need not import the
    web framework and the models' code."""
    if name == "GraphRecall":
        from graphrecall.library import GraphRecall

        return GraphRecall
    raise AttributeError(f"module 'graphrecall' has no attribute {name!r}")
