"""graphrecall as a Python library, in process (see :class:`GraphRecall`)."""

from graphrecall.domain.errors import BadRequest, GraphRecallError, NotFound
from graphrecall.library.calls import Pager
from graphrecall.library.client import GraphRecall

__all__ = ["BadRequest", "GraphRecall", "GraphRecallError", "NotFound", "Pager"]
