"""Commands added through the ``graphrecall.commands`` entry point: declared without
importing their code, and refused in one line naming the extra when it is missing."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from graphrecall.cli import EXIT_CONFIG, main
from graphrecall.cli.extensions import LazyCommand, MissingExtra, add_lazy


def test_help_imports_no_benchmark_and_no_model_code() -> None:
    probe = (
        "import json, sys\n"
        "from graphrecall.cli import build_parser\n"
        "build_parser().format_help()\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    loaded = json.loads(
        subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True
        ).stdout
    )
    bench = [m for m in loaded if m.startswith("graphrecall_bench")]
    assert bench == ["graphrecall_bench", "graphrecall_bench.commands"]  # the declarations
    heavy = {"zep_cloud", "onnxruntime", "spacy", "faiss", "fastapi", "matplotlib"}
    assert not heavy & {m.split(".")[0] for m in loaded}


def test_bench_is_declared_through_the_entry_point(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["bench", "locomo", "--help"])  # the benchmark's own parser, built when asked
    assert done.value.code == 0
    assert "--data" in capsys.readouterr().out


def test_a_command_without_its_extra_names_it(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="graphrecall")
    sub = parser.add_subparsers(dest="command", required=True)
    needy = LazyCommand("needy", "needs a missing module", "json", "fancy", ("no_such_mod_x",))
    add_lazy(sub, needy)
    args, rest = parser.parse_known_args(["needy", "--anything"])
    with pytest.raises(MissingExtra, match=r"pip install 'graphrecall\[fancy\]'"):
        args.func(args, rest)


def test_unknown_options_of_a_plain_command_are_still_refused() -> None:
    with pytest.raises(SystemExit) as done:
        main(["keys", "list", "--no-such-option"])
    assert done.value.code == EXIT_CONFIG
