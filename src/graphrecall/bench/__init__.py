"""Benchmarks: commands that print tables and write JSON (``graphrecall bench ...``).

Each benchmark is one module with ``add_arguments(parser)`` and ``run(args) -> int``;
``graphrecall.cli`` registers it as a ``bench`` subcommand. They measure speed and
quality; the test suite only checks that they run and what their JSON looks like.
"""
