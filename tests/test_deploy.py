"""deploy/compose.yaml names real things: each graphrecall service runs a command the CLI
parses (two ``serve --no-worker``, two ``worker``), every ``GRAPHRECALL_*`` variable is a
setting and its value passes the settings' own validation, the database URL opens the
PostgreSQL backend, the proxy sends traffic to the API services' port, and the image the
services build has a Dockerfile. Docker itself is not run here."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

from graphrecall import cli
from graphrecall.config import ENV_PREFIX, Settings
from graphrecall.store.postgres.connection import split_schema

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
# ${NAME:?message} and ${NAME}: what compose substitutes from the environment.
VARIABLE = re.compile(r"\$\{(\w+)(?::\?[^}]*)?\}")
EXAMPLE = {"POSTGRES_PASSWORD": "s3cret-pw", "GRAPHRECALL_API_KEY": "k" * 40}


def _compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    return loaded


def _substituted(value: str) -> str:
    return VARIABLE.sub(lambda m: EXAMPLE[m.group(1)], value)


def _graphrecall_services(services: dict[str, Any]) -> dict[str, list[str]]:
    return {
        name: service["command"]
        for name, service in services.items()
        if service.get("command", [None])[0] == "graphrecall"
    }


def test_services_run_real_commands() -> None:
    services = _compose()["services"]
    commands = _graphrecall_services(services)
    parser = cli.build_parser()
    api, workers = [], []
    for name, command in commands.items():
        args = parser.parse_args(command[1:])
        if args.func is cli.cmd_serve:
            assert args.no_worker, name  # ingestion runs in the worker services only
            assert args.host == "0.0.0.0" and args.port, name
            api.append((name, args.port))
        else:
            assert args.func is cli.cmd_worker, name
            assert args.worker_threads and args.worker_threads >= 1
            workers.append(name)
    assert len(api) == 2 and len(workers) == 2

    caddyfile = (DEPLOY / "Caddyfile").read_text()
    upstreams = re.search(r"reverse_proxy ([^{]+)\{", caddyfile)
    assert upstreams is not None
    assert sorted(upstreams.group(1).split()) == sorted(f"{n}:{p}" for n, p in api)
    assert "health_uri /healthz" in caddyfile  # the API's health route
    proxy = services["proxy"]
    assert proxy["image"].startswith("caddy:")
    assert "./Caddyfile:/etc/caddy/Caddyfile:ro" in proxy["volumes"]


def test_settings_are_real_and_valid() -> None:
    services = _compose()["services"]
    fields = {ENV_PREFIX + name.upper() for name in Settings.model_fields}
    for name in _graphrecall_services(services):
        service = services[name]
        env = {k: _substituted(str(v)) for k, v in service["environment"].items()}
        assert set(env) <= fields, set(env) - fields
        settings = Settings.model_validate(
            {k[len(ENV_PREFIX) :].lower(): v for k, v in env.items()}
        )
        assert settings.db.startswith("postgresql://")
        url, schema = split_schema(settings.db)
        assert schema == "public" and url.endswith("@postgres:5432/graphrecall")
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert service["build"]["dockerfile"] == "deploy/Dockerfile"
        assert (
            DEPLOY.parent / service["build"]["context"].strip("./") / "deploy/Dockerfile"
        ).exists()


def test_database_meets_the_requirements() -> None:
    postgres = _compose()["services"]["postgres"]
    image, tag = postgres["image"].split(":")
    assert image == "pgvector/pgvector"
    assert int(tag.removeprefix("pg")) >= 15  # docs/deployment.md: PostgreSQL 15 or newer
    env = postgres["environment"]
    db_url = _substituted(_compose()["x-graphrecall"]["environment"]["GRAPHRECALL_DB"])
    assert db_url == (
        f"postgresql://{env['POSTGRES_USER']}:{EXAMPLE['POSTGRES_PASSWORD']}"
        f"@postgres:5432/{env['POSTGRES_DB']}"
    )
