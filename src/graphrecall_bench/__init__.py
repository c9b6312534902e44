"""Benchmarks: commands that print tables and write JSON (``graphrecall bench ...``).

Not part of the product: the ``graphrecall`` package imports nothing from here. This
package adds its ``bench`` command through the ``graphrecall.commands`` entry point
(``commands.add_commands``), and each benchmark is one module with
``add_arguments(parser)`` and ``run(args) -> int``, imported only when it runs. They need
the ``bench`` extra (the Zep SDK they drive the server with). They measure speed and
quality; the test suite only checks that they run and what their JSON looks like.
"""
