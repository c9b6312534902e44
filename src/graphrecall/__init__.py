"""graphrecall: a self-hosted memory and context-graph server for AI agents.

It speaks the Zep v4 REST API (so the official ``zep-cloud`` SDK works against it
unchanged) and runs offline by default: embedded SQLite, bundled ONNX embedder.
"""

__version__ = "0.1.0"
