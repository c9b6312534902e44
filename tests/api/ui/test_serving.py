"""How /ui is served: the same page for every path under it (shareable URLs), assets
from the package, and headers that keep the page to this server."""

from __future__ import annotations

import httpx

from tests.conftest import Server


def test_every_path_under_ui_is_the_app(ui_server: Server) -> None:
    base = f"http://127.0.0.1:{ui_server.port}"
    assert httpx.get(f"{base}/ui").headers["location"] == "/ui/"
    root = httpx.get(f"{base}/")  # the server's root leads to the explorer
    assert root.status_code == 307 and root.headers["location"] == "/ui/"
    pages = ["/ui/", "/ui/graph/abc", "/ui/search/abc?q=x&scope=nodes", "/ui/memories/space1"]
    bodies = set()
    for path in pages:
        response = httpx.get(base + path)
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/html")
        csp = response.headers["content-security-policy"]
        assert "default-src 'self'" in csp and "script-src" not in csp
        assert response.headers["referrer-policy"] == "no-referrer"
        bodies.add(response.text)
    assert len(bodies) == 1 and '<script type="module" src="/ui/assets/js/main.js">' in bodies.pop()


def test_assets_come_from_the_package(ui_server: Server) -> None:
    base = f"http://127.0.0.1:{ui_server.port}/ui/assets"
    library = httpx.get(f"{base}/vendor/cytoscape/cytoscape.esm.min.mjs")
    assert library.status_code == 200 and "javascript" in library.headers["content-type"]
    assert "Cytoscape Consortium" in httpx.get(f"{base}/vendor/cytoscape/LICENSE").text
    assert httpx.get(f"{base}/js/pages/graph.js").status_code == 200
    assert httpx.get(f"{base}/js/no-such-file.js").status_code == 404
