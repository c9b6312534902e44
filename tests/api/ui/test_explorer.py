"""The explorer at /ui in a real browser (Debian's headless Chromium): each page shows the
seeded data, a click on a drawn node shows its facts, and every page has its own URL."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect

from tests.api.ui.conftest import Tab
from tests.api.ui.seed import FACTS, NODES, SPACE, Seeded, seed_star
from tests.conftest import API_KEY, Server

# Slow: a real browser against a server process on TCP.
pytestmark = pytest.mark.slow


def shot(page: Page, screenshots: Path, name: str) -> None:
    path = screenshots / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000


def no_key_in_urls(tab: Tab) -> None:
    """The key travels only in the Authorization header, never in a URL the page asks."""
    assert tab.requests
    assert not [url for url in tab.requests if API_KEY in url]


def test_sign_in_checks_the_key_and_keeps_it_out_of_urls(tab: Tab, screenshots: Path) -> None:
    page = tab.open("/ui/", key=None)
    expect(page).to_have_url(re.compile(r"/ui/signin$"))
    page.fill("#key", "not-a-key")
    page.click("button[type=submit]")
    expect(page.locator(".error")).to_contain_text("not accepted")
    shot(page, screenshots, "signin")
    page.fill("#key", API_KEY)
    page.click("button[type=submit]")
    expect(page.locator("#users")).to_contain_text("alice")
    assert page.evaluate("sessionStorage.getItem('graphrecall.key')") == API_KEY
    no_key_in_urls(tab)


def test_users_and_graphs_with_a_key_from_the_fragment(
    tab: Tab, seeded: Seeded, screenshots: Path
) -> None:
    page = tab.open("/ui/")
    expect(page.locator("#users")).to_contain_text("Alice Martin")
    expect(page.locator("#graphs")).to_contain_text("Rocket research")
    expect(page.locator("h2").first).to_have_text("Users (1)")
    # the key left the address bar as soon as it was read
    assert "key=" not in page.url
    shot(page, screenshots, "home")
    page.fill("input[name=q]", "rocket")
    page.click("button[type=submit]")
    expect(page.locator("#graphs")).to_contain_text("Rocket research")
    expect(page.locator("h2").first).to_have_text("Users (0)")
    assert urlsplit(page.url).query == "q=rocket"
    page.click(f"#graphs a[href='/ui/graph/{seeded.standalone_graph}']")
    expect(page.locator("h1")).to_contain_text("Rocket research")
    no_key_in_urls(tab)


def click_node(page: Page, name: str) -> None:
    """A real mouse click on the canvas, where cytoscape drew the node."""
    box = page.locator("#cy").bounding_box()
    assert box is not None
    position = page.evaluate(
        """(name) => {
            const node = window.graphrecallCy.nodes().filter((n) => n.data('name') === name)[0];
            return node.renderedPosition();
        }""",
        name,
    )
    page.mouse.click(box["x"] + position["x"], box["y"] + position["y"])


def test_graph_view_draws_the_graph_and_a_click_shows_a_node(
    tab: Tab, seeded: Seeded, screenshots: Path
) -> None:
    page = tab.open(f"/ui/graph/{seeded.user_uuid}")
    text = page.locator("#graph-text")
    for name in NODES:
        expect(text.locator("#node-list")).to_contain_text(name)
    for _, _, _, fact, _, _ in FACTS:
        expect(text.locator("#fact-list")).to_contain_text(fact)
    drawn = page.evaluate("window.graphrecallCy.nodes().map((n) => n.data('name'))")
    assert set(NODES) <= set(drawn)
    # sized by degree: Alice (5 facts) is drawn larger than Globex (1)
    sizes = page.evaluate(
        "Object.fromEntries(window.graphrecallCy.nodes().map((n) => [n.data('name'), n.width()]))"
    )
    assert sizes["Alice"] > sizes["Globex"]
    # coloured by type: the two people share a colour, a place has another
    colours = page.evaluate(
        "Object.fromEntries(window.graphrecallCy.nodes()"
        ".map((n) => [n.data('name'), n.data('color')]))"
    )
    assert colours["Alice"] == colours["Bob"] != colours["Berlin"]
    click_node(page, "Alice")
    details = page.locator("#details")
    expect(details.locator("#node-name")).to_have_text("Alice")
    expect(details.locator("#node-summary")).to_have_text(NODES["Alice"][1])
    facts = details.locator("#node-facts")
    expect(facts).to_contain_text("Alice works at Acme as a senior engineer")
    berlin = facts.locator("li.fact.invalid")
    expect(berlin).to_have_count(1)
    expect(berlin).to_contain_text("Alice lived in Berlin")
    expect(berlin.locator(".badge")).to_have_text("invalidated")
    expect(berlin).to_contain_text("2019-06-01")
    assert f"node={seeded.nodes['Alice']}" in page.url
    shot(page, screenshots, "graph")
    # "as of" hides the facts not valid then, in the drawing and in the list
    page.fill("input[name=asof]", "2020-01-01")
    page.dispatch_event("input[name=asof]", "change")
    expect(text.locator("#fact-list")).to_contain_text("Alice lived in Berlin")
    expect(text.locator("#fact-list")).not_to_contain_text("Alice moved to Paris")
    hidden = page.evaluate(
        "window.graphrecallCy.edges('.hidden').map((e) => e.id())",
    )
    assert seeded.edges["Alice moved to Paris"] in hidden
    assert seeded.edges["Alice lived in Berlin"] not in hidden
    assert "asof=2020-01-01" in page.url


def test_graph_view_of_one_node_shows_its_episodes_and_expands(
    tab: Tab, seeded: Seeded, screenshots: Path
) -> None:
    # the user's own node was extracted from the thread, so episodes mention it
    page = tab.open(f"/ui/graph/{seeded.user_uuid}")
    expect(page.locator("#node-list")).to_contain_text("Alice Martin")
    page.locator("#node-list button", has_text=re.compile(r"^Paris$")).click()
    details = page.locator("#details")
    expect(details.locator("#node-name")).to_have_text("Paris")
    expect(details.locator("#node-episodes")).to_contain_text("I moved to Paris last spring")
    before = page.evaluate("window.graphrecallCy.nodes().length")
    page.click("#expand")
    expect(page.locator("#expand")).to_contain_text("Expanded (")
    assert page.evaluate("window.graphrecallCy.nodes().length") >= before
    # a deep link to a node opens the graph with that node selected
    page.goto(f"{tab.base}/ui/graph/{seeded.graph_uuid}?node={seeded.nodes['Bob']}")
    expect(page.locator("#node-name")).to_have_text("Bob")
    expect(page.locator("#node-facts")).to_contain_text("Bob works at Globex in sales")


def test_a_big_graph_is_drawn_around_its_highest_degree_nodes(tab: Tab, ui_server: Server) -> None:
    star = seed_star(ui_server)
    page = tab.open(f"/ui/graph/{star}?seeds=1")
    expect(page.locator("#graph-status")).to_contain_text("Showing 11 of 18 nodes")
    names = page.locator("#node-list button").all_inner_texts()
    assert names[0] == "Hub" and len(names) == 11
    assert not [n for n in names if n.startswith(("Loner", "Pair"))]
    # expanding is how the rest is reached
    page.goto(f"{tab.base}/ui/graph/{star}")
    expect(page.locator("#graph-status")).to_contain_text("All 18 nodes and 11 facts")


def test_search_playground(tab: Tab, seeded: Seeded, screenshots: Path) -> None:
    page = tab.open(f"/ui/search/{seeded.user_uuid}?q=Where+does+Alice+live&scope=edges")
    results = page.locator("#results table")
    expect(results).to_contain_text("Alice moved to Paris")
    scores = page.locator("#results td.num:nth-child(2)").all_inner_texts()
    assert scores and all(float(s) > 0 for s in scores)
    assert [float(s) for s in scores] == sorted((float(s) for s in scores), reverse=True)
    shot(page, screenshots, "search")
    # the center node is offered by name
    options = page.locator("#center-nodes option")
    expect(options.first).to_have_attribute("label", "Alice")
    # nodes with MMR: the query string follows the form
    page.select_option("select[name=scope]", "nodes")
    page.select_option("select[name=reranker]", "mmr")
    page.fill("input[name=mmr_lambda]", "0.7")
    page.fill("input[name=q]", "Acme rockets")
    page.click("#search-form button[type=submit]")
    expect(results).to_contain_text("Acme")
    query = urlsplit(page.url).query
    assert "scope=nodes" in query and "reranker=mmr" in query and "mmr_lambda=0.7" in query
    # filters as JSON: the server's 400 names the field
    page.select_option("select[name=scope]", "edges")
    page.select_option("select[name=reranker]", "rrf")
    page.fill("input[name=mmr_lambda]", "")
    page.fill("textarea[name=filters]", '{"edge_types": ["WORKS_AT"]}')
    page.click("#search-form button[type=submit]")
    expect(results).to_contain_text("Bob works at Globex in sales")
    expect(results).not_to_contain_text("Alice moved to Paris")
    page.fill("textarea[name=filters]", '{"no_such_filter": 1}')
    page.click("#search-form button[type=submit]")
    expect(page.locator("#results .error")).to_contain_text("filters")
    page.fill("textarea[name=filters]", "{not json")
    page.click("#search-form button[type=submit]")
    expect(page.locator("#results .error")).to_contain_text("not valid JSON")
    # a center node with the node_distance reranker puts its own facts first
    page.fill("textarea[name=filters]", "")
    page.fill("input[name=q]", "works at")
    page.select_option("select[name=reranker]", "node_distance")
    for who, first in (("Bob", "Bob works at Globex"), ("Alice", "Alice works at Acme")):
        page.fill("input[name=center]", seeded.nodes[who])
        page.click("#search-form button[type=submit]")
        expect(results.locator("tbody tr, tr").nth(1)).to_contain_text(first)
    assert f"center={seeded.nodes['Alice']}" in page.url
    page.fill("input[name=center]", "")
    page.select_option("select[name=reranker]", "rrf")
    # a result links into the graph view
    page.fill("textarea[name=filters]", "")
    page.select_option("select[name=scope]", "nodes")
    page.fill("input[name=q]", "Berlin")
    page.click("#search-form button[type=submit]")
    page.locator("#results a", has_text=re.compile(r"^Berlin$")).first.click()
    expect(page.locator("#node-name")).to_have_text("Berlin")
    expect(page.locator("#node-facts")).to_contain_text("Alice lived in Berlin")


def test_context_preview(tab: Tab, seeded: Seeded, screenshots: Path) -> None:
    page = tab.open(f"/ui/context/{seeded.user_uuid}?q=Where+does+Alice+live")
    block = page.locator("#context-block")
    expect(block).to_contain_text("Alice moved to Paris (since 2024-04-01)")
    expect(block).to_contain_text("Alice lived in Berlin (2019-06-01 to 2024-04-01)")
    ranks = [int(r) for r in page.locator("#context-items td.num").all_inner_texts()]
    assert ranks and ranks == sorted(ranks) and ranks[0] == 1
    shot(page, screenshots, "context")
    page.fill("input[name=budget]", "200")
    page.select_option("select[name=recency]", "strong")
    page.click("#context-form button[type=submit]")
    expect(page.locator("#context-out h2").first).to_contain_text("truncated")
    assert len(block.inner_text()) <= 200
    assert "budget=200" in page.url and "recency=strong" in page.url


def test_timeline_of_a_thread_and_of_a_graph(tab: Tab, seeded: Seeded, screenshots: Path) -> None:
    page = tab.open(f"/ui/threads/{seeded.user_uuid}")
    timeline = page.locator("#timeline > li")
    expect(timeline).to_have_count(3)
    expect(timeline.first).to_contain_text("I moved to Paris last spring")
    expect(page.locator("#timeline .badge.ok")).to_have_count(3)
    # the facts a message gave are listed under it
    expect(timeline.first.locator("li.fact").first).to_be_visible()
    shot(page, screenshots, "timeline")
    page.goto(f"{tab.base}/ui/threads/{seeded.standalone_graph}")
    expect(page.locator("#timeline")).to_contain_text("Acme tested the Merlin engine in Texas.")


def test_memories_tree_search_and_history(tab: Tab, seeded: Seeded, screenshots: Path) -> None:
    page = tab.open(f"/ui/memories/{SPACE}")
    tree = page.locator("#memory-tree")
    expect(tree.locator("li[data-path='/projects']")).to_contain_text("projects (3)")
    expect(tree.locator("li[data-path='/projects/apollo']")).to_contain_text("apollo (2)")
    expect(page.locator("#memory-results")).to_contain_text("4 of 4 memories")
    tree.locator("li[data-path='/projects/apollo'] button").click()
    expect(page.locator("#memory-results")).to_contain_text("2 of 2 memories")
    expect(page.locator("#memory-results")).not_to_contain_text("Zephyr")
    # grep alone is refused by the server, and the page says why
    page.fill("input[name=tree]", "")
    page.select_option("select[name=mode]", "grep")
    page.fill("input[name=q]", "valves")
    page.click("#memory-search button[type=submit]")
    expect(page.locator("#memory-results .error")).to_contain_text("grep cannot be used alone")
    for mode, words, under in (
        ("grep", "valves", "/projects"),
        ("fulltext", "wind tunnel", ""),
        ("semantic", "valves", "/projects/apollo"),
    ):
        page.fill("input[name=tree]", under)
        page.select_option("select[name=mode]", mode)
        page.fill("input[name=q]", words)
        page.click("#memory-search button[type=submit]")
        expected = "Zephyr notes" if words == "wind tunnel" else "Apollo risk"
        expect(page.locator("#memory-results tbody tr").first).to_contain_text(expected)
    # the temporal filter: only the plan is valid in mid-March
    page.fill("input[name=q]", "")
    page.fill("input[name=tree]", "")
    page.fill("input[name=at]", "2026-03-15")
    page.click("#memory-search button[type=submit]")
    expect(page.locator("#memory-results")).to_contain_text("1 of 1 memories")
    expect(page.locator("#memory-results")).to_contain_text("Apollo launch plan")
    page.locator("#memory-results tbody tr").first.locator("button").click()
    expect(page.locator("#memory-detail")).to_contain_text("2026-03-01 00:00Z → 2026-03-31 00:00Z")
    page.fill("input[name=at]", "")
    page.fill("input[name=tree]", "/projects/apollo")
    page.select_option("select[name=mode]", "grep")
    page.fill("input[name=q]", "valves")
    page.click("#memory-search button[type=submit]")
    page.locator("#memory-results tbody tr").first.locator("button").click()
    expect(page.locator("#memory-content")).to_have_text(
        "Apollo risk: the supplier of valves is late."
    )
    expect(page.locator("#memory-detail")).to_contain_text('"kind": "risk"')
    expect(page.locator("#memory-history")).to_contain_text("insert")
    assert f"id={seeded.memories['/projects/apollo/risks']}" in page.url
    shot(page, screenshots, "memories")


def test_another_projects_key_sees_none_of_it(tab: Tab, seeded: Seeded, other_key: str) -> None:
    page = tab.open("/ui/", key=other_key)
    expect(page.locator("h2").first).to_have_text("Users (0)")
    page.goto(f"{tab.base}/ui/graph/{seeded.user_uuid}")
    expect(page.locator(".error")).to_contain_text("not found")


def test_api_docs_render_with_no_network(tab: Tab, screenshots: Path) -> None:
    page = tab.page
    outside: list[str] = []

    def only_loopback(route, request):  # type: ignore[no-untyped-def]
        if urlsplit(request.url).hostname in ("127.0.0.1", "localhost") or request.url.startswith(
            ("data:", "blob:")
        ):
            route.continue_()
        else:
            outside.append(request.url)
            route.abort()

    page.route("**/*", only_loopback)
    page.goto(f"{tab.base}/docs")
    expect(page.locator(".opblock").first).to_be_visible()
    expect(page.locator("body")).to_contain_text("/api/v4/graphs/{graph_uuid}/search/edges")
    page.click("button.authorize")
    expect(page.locator(".auth-container").first).to_contain_text("BearerKey")
    shot(page, screenshots, "docs")
    page.goto(f"{tab.base}/redoc")
    expect(page.locator("h1").first).to_contain_text("graphrecall")
    expect(page.locator("body")).to_contain_text("BearerKey")
    assert outside == []
