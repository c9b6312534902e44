"""Fixtures for the explorer's browser tests: a seeded server on loopback, and Debian's
headless Chromium driven by Playwright (``executable_path``: Playwright's own browser
download is neither needed nor reachable). The tests need the browser; a machine without
it fails them with the command that installs it (``.ci/run`` runs that command)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect, sync_playwright

from tests.api.ui.seed import SPACE, Seeded, seed
from tests.conftest import API_KEY, Server, _free_port

# expect()'s own wait (5 s by default) is not the context's: on a loaded 2-core machine the
# explorer's first render took longer (two flakes at load 13), so it waits as long as actions.
expect.set_options(timeout=30_000)

# Without these Chromium waits on the network on a machine with none (sign-in, field
# trials, component updates) and cannot start its sandbox as root.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    found = os.environ.get("GRAPHRECALL_CHROMIUM") or shutil.which("chromium")
    if not found:
        pytest.fail(
            "the explorer tests need Debian's Chromium: apt-get install -y chromium"
            " (or set GRAPHRECALL_CHROMIUM to a Chromium executable)"
        )
    return found


@pytest.fixture(scope="session")
def ui_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    db = tmp_path_factory.mktemp("ui") / "graphrecall.db"
    srv = Server(db, _free_port(), API_KEY, {"GRAPHRECALL_SPACE": SPACE}).start()
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def seeded(ui_server: Server) -> Seeded:
    return seed(ui_server)


@pytest.fixture(scope="session")
def other_key(ui_server: Server) -> str:
    """A key of another project on the same server."""
    made = ui_server.cli("keys", "create", "--project", "other", "--name", "ui-test")
    return made.splitlines()[-1]


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the tests leave their screenshots ($GRAPHRECALL_UI_SCREENSHOTS, else a
    pytest temporary directory)."""
    wanted = os.environ.get("GRAPHRECALL_UI_SCREENSHOTS")
    if wanted:
        Path(wanted).mkdir(parents=True, exist_ok=True)
        return Path(wanted)
    return tmp_path_factory.mktemp("ui-screenshots")


@pytest.fixture(scope="session")
def browser_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=chromium_path(),
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1400, "height": 900},
        )
        context.set_default_timeout(30_000)
        yield context
        context.close()


class Tab:
    """One page of the browser, with the URLs it requested and the errors it threw."""

    def __init__(self, page: Page, base: str) -> None:
        self.page, self.base = page, base
        self.requests: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self, path: str, key: str | None = API_KEY) -> Page:
        self.page.goto(self.base + path + (f"#key={key}" if key else ""))
        return self.page


@pytest.fixture()
def tab(browser_context: BrowserContext, ui_server: Server, seeded: Seeded) -> Iterator[Tab]:
    page = browser_context.new_page()
    opened = Tab(page, f"http://127.0.0.1:{ui_server.port}")
    yield opened
    page.close()
    assert opened.errors == [], opened.errors
