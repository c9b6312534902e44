"""The README's first command, proven on a plain install: run by .ci/run with the
Python of a fresh virtual environment into which only the graphrecall wheel was
installed (no extras), in an empty home directory.

It checks, in order: ``graphrecall --help`` answers; a benchmark command without its
extra says which extra to install (exit 2); ``graphrecall serve`` starts on the default
database and prints the first API key and the explorer's URL; ``/`` leads to the
explorer; the README's quickstart (after the ``pip install`` it names) and its library
block run as they stand in README.md, with only the key and the port put in; the server
stops cleanly on SIGINT. Any failure exits non-zero with the reason.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
BIN = Path(sys.executable).parent
STARTUP_S = 600  # first start in an empty home builds the embedder's integer-kernel model


def fail(message: str) -> None:
    print(f"readme check: FAILED: {message}", flush=True)
    raise SystemExit(1)


def step(message: str) -> None:
    print(f"readme check: {message}", flush=True)


def run(*args: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if done.returncode != expect:
        fail(
            f"{' '.join(args)} exited {done.returncode}, not {expect}:\n{done.stdout}{done.stderr}"
        )
    return done


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def readme_blocks() -> list[str]:
    text = README.read_text()
    if "pip install . && graphrecall serve" not in text:
        fail("the README no longer says 'pip install . && graphrecall serve'")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    if len(blocks) < 2:
        fail("the README has no quickstart and library python blocks")
    return blocks


def main() -> None:
    quickstart, library = readme_blocks()[:2]
    graphrecall = str(BIN / "graphrecall")

    started = time.monotonic()
    helped = run(graphrecall, "--help")
    step(f"graphrecall --help answered in {time.monotonic() - started:.2f} s")
    if "serve" not in helped.stdout or "bench" not in helped.stdout:
        fail("--help does not list serve and bench")
    extra = run(graphrecall, "bench", "locomo", "--data", "x.json", expect=2)
    if "pip install 'graphrecall[bench]'" not in extra.stderr:
        fail(f"bench without its extra did not name it: {extra.stderr!r}")
    step("bench without its extra names the extra (exit 2)")

    port = free_port()
    env = {**os.environ, "GRAPHRECALL_PORT": str(port)}
    server = subprocess.Popen(
        [graphrecall, "serve"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    assert server.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + STARTUP_S
    while not any("explorer" in line for line in lines):
        line = server.stdout.readline()
        if not line:
            fail("graphrecall serve exited while starting:\n" + "".join(lines))
        lines.append(line)
        if time.monotonic() > deadline:
            server.kill()
            fail("graphrecall serve did not start in time:\n" + "".join(lines))
    output = "".join(lines)
    step(f"graphrecall serve started in {time.monotonic() - deadline + STARTUP_S:.0f} s")
    key = re.search(r"^\s+(gr_\S+)$", output, flags=re.M)
    if key is None:
        fail("serve printed no first API key:\n" + output)
    assert key is not None
    if f"http://127.0.0.1:{port}/ui/" not in output:
        fail("the serve banner does not name the explorer:\n" + output)
    try:
        opener = urllib.request.build_opener(NoRedirect)
        opener.open(f"http://127.0.0.1:{port}/")
        fail("/ did not redirect")
    except urllib.error.HTTPError as exc:
        if exc.code != 307 or exc.headers["location"] != "/ui/":
            fail(f"/ answered {exc.code} {exc.headers.get('location')}")
    step("/ leads to the explorer")

    try:
        run(str(BIN / "pip"), "install", "--quiet", "zep-cloud==4.0.1")  # as the README says
        code = quickstart.replace("YOUR_KEY", key.group(1)).replace(
            "http://127.0.0.1:8000", f"http://127.0.0.1:{port}"
        )
        with tempfile.TemporaryDirectory() as here:
            ran = subprocess.run(
                [sys.executable, "-c", code], cwd=here, capture_output=True, text=True, timeout=300
            )
            if ran.returncode != 0:
                fail(f"the README's quickstart failed:\n{ran.stdout}{ran.stderr}")
            step("the README's quickstart ran:\n" + ran.stdout)
            ran = subprocess.run(
                [sys.executable, "-c", library],
                cwd=here,
                capture_output=True,
                text=True,
                timeout=600,
            )
            if ran.returncode != 0:
                fail(f"the README's library block failed:\n{ran.stdout}{ran.stderr}")
            step("the README's library block ran:\n" + ran.stdout)
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            fail("graphrecall serve did not stop on SIGINT")
    if server.returncode != 0:
        fail(f"graphrecall serve exited {server.returncode} on SIGINT")
    step("graphrecall serve stopped cleanly; all README checks passed")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


if __name__ == "__main__":
    main()
