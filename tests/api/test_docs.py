"""/docs and /redoc are served from package files (no CDN), and the OpenAPI document
declares how the API takes its key. The pages are rendered in a browser with the
network cut off in tests/api/ui/test_explorer.py."""

from __future__ import annotations

import re

from tests.inprocess import InProcess


def test_the_docs_pages_load_nothing_from_elsewhere(server: InProcess) -> None:
    http = server.http()
    for page in ("/docs", "/redoc"):
        response = http.get(page)
        assert response.status_code == 200
        assert "default-src 'self'" in response.headers["content-security-policy"]
        urls = re.findall(r"""(?:src|href)=["']([^"']+)""", response.text)
        assert urls and all(u.startswith("/docs-static/") for u in urls), urls
        for url in urls:
            asset = http.get(url)
            assert asset.status_code == 200 and len(asset.content) > 1000, url
        assert "https://" not in response.text


def test_openapi_declares_the_key_schemes(server: InProcess) -> None:
    http = server.http()
    schema = http.get("/openapi.json").json()
    schemes = schema["components"]["securitySchemes"]
    assert schemes["BearerKey"] == {
        "type": "http",
        "scheme": "bearer",
        "description": schemes["BearerKey"]["description"],
    }
    assert schemes["ApiKey"]["in"] == "header" and schemes["ApiKey"]["name"] == "Authorization"
    assert schema["security"] == [{"BearerKey": []}, {"ApiKey": []}]
    # a key given the way Swagger UI's "Authorize" sends it is accepted
    key = {"Authorization": f"Bearer {server.api_key}"}
    assert http.get("/api/v4/project", headers=key).is_success
