"""Real ``ameide serve`` processes for the registered-source tests: a home made by migrations,
an admin, a repository, and a serve process started with ``--json`` (its endpoints parsed)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from runtime import App, build_app
from service.authz import Caller
from service.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
AMEIDE = Path(sys.executable).parent / "ameide"
ADMIN = Caller("user:admin", purpose="sources test")
REPO = "acme/eng/backlog"


def open_home(home: Path, database_url: str | None = None, *, migrate: bool = False) -> App:
    """The service on ``home`` (and ``database_url``), without background threads."""
    return build_app(
        Settings(home=home, database_url=database_url), migrate=migrate, background=False
    )


def make_home(home: Path, database_url: str | None = None) -> None:
    """Migrate, make the admin and the repository (once per database)."""
    app = open_home(home, database_url, migrate=True)
    try:
        app.service.admin.bootstrap_admin(ADMIN.principal_id)
        app.service.admin.create_repository(ADMIN, REPO)
    finally:
        app.close()


@dataclass
class Served:
    proc: subprocess.Popen[str]
    base: str
    log: Path

    def stderr(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AMEIDE_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["AMEIDE_SEMANTIC"] = "off"
    return env


@contextmanager
def serve(home: Path, log: Path, database_url: str | None = None) -> Iterator[Served]:
    """``ameide serve --workers 1`` on free ports; SIGTERM and wait on exit."""
    db = ["--database-url", database_url] if database_url else []
    with log.open("w") as stderr:
        proc = subprocess.Popen(
            [str(AMEIDE), "--home", str(home), *db, "--as", ADMIN.principal_id, "--json",
             "serve", "--workers", "1", "--port", "0", "--grpc-port", "0", "--grace", "2"],
            stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=ROOT, env=_env(),
        )  # fmt: skip
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline()]
        while lines[-1] and lines[-1].rstrip() != "}":
            lines.append(proc.stdout.readline())
        text = "".join(lines)
        assert text.strip(), f"ameide serve announced nothing:\n{log.read_text()}"
        endpoints = json.loads(text)
        yield Served(proc, str(endpoints["rest"]).removesuffix("/v1"), log)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
