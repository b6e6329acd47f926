"""Secrets of every kind the probe found are masked with no routing rules (issue 28, item 6):
passwords in URLs (counted as secrets, not e-mail addresses), Stripe live keys, Google API keys,
JWTs, and a bare AWS secret access key next to its AKIA key id. Each is counted per kind in the
run report, nothing of it reaches any table, file or answer, and a rule on ``contains: secret``
still catches every kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from edge.results import as_json
from ingest.plan import element_id_for
from service.authz import Caller
from tests.conftest import World
from tests.integration.ingest.conftest import GitRepo

PG_PASSWORD = "Pg-s3cr3t-2024"
GIT_PASSWORD = "Gh7xTok3nPass"
FTP_PASSWORD = "Ftp-Pa55word"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
GOOGLE = "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
JWT_SIGNATURE = JWT.rsplit(".", 1)[1]
AWS_ID, AWS_SECRET = "AKIAI44QH8DHBEXAMPLE", "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY"
AWS_ID_2, AWS_SECRET_2 = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
NOTE = f"""# Release runbook

The database is postgres://admin:{PG_PASSWORD}@db.internal/app for now.
Mirror with `git clone https://deploy:{GIT_PASSWORD}@git.example.com/team/x.git`.
Artifacts go to ftp://mirror:{FTP_PASSWORD}@files.example.net/pub once signed.
Billing uses {STRIPE} in production.
Maps use {GOOGLE} on the status page.
The smoke test sends Authorization: Bearer {JWT}
The pipeline authenticates as {AWS_ID}
with {AWS_SECRET} (rotate monthly).
The backup job uses {AWS_ID_2} {AWS_SECRET_2} too.
"""
SECRETS = (
    PG_PASSWORD, GIT_PASSWORD, FTP_PASSWORD, STRIPE, GOOGLE, JWT, JWT_SIGNATURE,
    AWS_ID, AWS_SECRET, AWS_ID_2, AWS_SECRET_2,
)  # fmt: skip
KINDS = {
    "secret:aws": 4,
    "secret:google_api_key": 1,
    "secret:jwt": 1,
    "secret:stripe": 1,
    "secret:url_password": 3,
}


@pytest.fixture
def backlog(world: World, tmp_path: Path) -> tuple[World, Caller, GitRepo]:
    ingestor = Caller(f"service:ingest-{world.repo.split('/')[0]}")
    world.svc.admin.grant(world.admin, ingestor.principal_id, "ingestor", world.repo)
    git = GitRepo(tmp_path / "backlog")
    git.write("backlog/runbook.md", NOTE)
    git.write("backlog/plain.md", "# Plain\n\nNothing sensitive.\n")
    git.commit("a runbook full of credentials")
    return world, ingestor, git


def _everything_stored(world: World) -> str:
    out = []
    with world.app.engine.connect() as conn:
        for name in sa.inspect(conn).get_table_names():
            rows = conn.execute(sa.text(f'SELECT * FROM "{name}"')).all()
            out.append(json.dumps(as_json([list(r) for r in rows]), default=str))
    return "\n".join(out)


def test_with_no_rules_every_kind_of_secret_is_masked_and_counted(backlog) -> None:
    world, ingestor, git = backlog
    report = world.svc.ingest.ingest_backlog(ingestor, str(git.root), world.repo)

    assert report["pii"]["redacted_files"] == 1
    assert report["pii"]["redacted"] == KINDS
    # the password of a URL is a secret, not the local part of an e-mail address
    assert report["pii"]["detected"] == KINDS

    element_id = element_id_for(world.repo, str(git.root.resolve()), "backlog/runbook.md")
    version = world.svc.elements.get_element(world.curator, element_id)["version"]
    assert version["metadata"]["pii_redacted"] == KINDS
    body = version["body"]
    # only the password of a URL is masked: user, host and path stay readable
    assert "postgres://admin:" in body
    assert "@db.internal/app" in body
    assert "https://deploy:" in body
    assert "@git.example.com/team/x.git" in body
    assert "ftp://mirror:" in body
    assert "@files.example.net/pub" in body
    assert "(rotate monthly)" in body

    world.svc.index.index_status(world.admin)  # the index has applied everything
    stored = _everything_stored(world)
    files = b"\n".join(
        p.read_bytes() for p in sorted(world.app.settings.home.rglob("*")) if p.is_file()
    )
    shown = json.dumps(as_json([version, world.svc.history.history(world.auditor, world.repo)]))
    for secret in SECRETS:
        assert secret not in stored, secret
        assert secret.encode() not in files, secret
        assert secret not in shown, secret
    assert "db.internal" in stored  # the search can see what it looks for


def test_a_rule_on_contains_secret_still_catches_every_kind(backlog) -> None:
    world, ingestor, git = backlog
    routing = """
version: 1
rules:
  - name: secrets
    override: true
    match: {all: [{field: signals.pii_kinds, contains: secret}]}
    actions: {policy: reject}
"""
    report = world.svc.ingest.ingest_backlog(ingestor, str(git.root), world.repo, routing=routing)
    assert report["pii"]["rejected_files"] == 1
    assert report["pii"]["rejected"] == KINDS
    assert [s["path"] for s in report["skipped"]] == ["backlog/runbook.md"]
