"""Secrets and payment data are not stored unless someone chose to (issue 12, item 3): with no
routing rules, ingest masks API keys and other secrets, payment card numbers and IBANs (the
default policy ``protect``), keeps e-mail addresses and phone numbers (documented in
docs/ingest.md), and nothing of a masked value reaches the database, the index, the chunks,
stored contexts or audit payloads. ``policy: store`` keeps them, explicitly."""

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
from tests.read_world import request

CARD = "4111 1111 1111 1111"
IBAN = "DE89 3704 0044 0532 0130 00"
KEY = "AKIAIOSFODNN7EXAMPLE"
EMAIL = "jane.doe@pay.example.com"
NOTE = f"""# Supplier payments

Charge the card {CARD} for the annual licence.
Wire the rest to IBAN {IBAN}.
The pipeline authenticates with aws key {KEY} today.
Questions to {EMAIL}.
"""
# what must not survive anywhere, in every form it was written in
NEEDLES = (CARD, CARD.replace(" ", ""), IBAN, IBAN.replace(" ", ""), KEY, "0532 0130")


@pytest.fixture
def backlog(world: World, tmp_path: Path) -> tuple[World, Caller, GitRepo]:
    ingestor = Caller(f"service:ingest-{world.repo.split('/')[0]}")
    world.svc.admin.grant(world.admin, ingestor.principal_id, "ingestor", world.repo)
    git = GitRepo(tmp_path / "backlog")
    git.write("backlog/payments.md", NOTE)
    git.write("backlog/plain.md", "# Plain\n\nNothing sensitive.\n")
    git.commit("a backlog with payment data")
    return world, ingestor, git


def _everything_stored(world: World) -> str:
    """Every row of every table, as text."""
    out = []
    with world.app.engine.connect() as conn:
        names = sa.inspect(conn).get_table_names()
        for name in names:
            rows = conn.execute(sa.text(f'SELECT * FROM "{name}"')).all()
            out.append(json.dumps(as_json([list(r) for r in rows]), default=str))
    return "\n".join(out)


def _every_file_bytes(home: Path) -> bytes:
    return b"\n".join(p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file())


def test_with_no_rules_secrets_cards_and_ibans_are_masked_everywhere(backlog) -> None:
    world, ingestor, git = backlog
    report = world.svc.ingest.ingest_backlog(ingestor, str(git.root), world.repo)
    assert report["pii"]["redacted_files"] == 1
    assert report["pii"]["redacted"] == {"iban": 1, "payment_card": 1, "secret:aws": 1}
    assert report["pii"]["detected"]["email"] == 1  # found, and kept by the default policy

    element_id = element_id_for(world.repo, str(git.root.resolve()), "backlog/payments.md")
    version = world.svc.elements.get_element(world.curator, element_id)["version"]
    assert version["metadata"]["pii_redacted"] == {"iban": 1, "payment_card": 1, "secret:aws": 1}
    assert EMAIL in version["body"]
    assert "for the annual licence" in version["body"]
    context = world.svc.reading.read_context(
        world.reader, request(world.repo, "supplier payments card licence", selector="head")
    )
    assert context["items"]
    assert element_id in {i["element_id"] for i in context["items"]}
    world.svc.index.index_status(world.admin)  # the index has applied everything

    stored = _everything_stored(world)
    files = _every_file_bytes(world.app.settings.home)
    shown = json.dumps(
        as_json([version, context, world.svc.history.history(world.auditor, world.repo)])
    )
    for needle in NEEDLES:
        assert needle not in stored, needle
        assert needle.encode() not in files, needle
        assert needle not in shown, needle
    assert EMAIL in stored  # the scan can see what it looks for


def test_policy_store_keeps_them_because_someone_chose_to(backlog) -> None:
    world, ingestor, git = backlog
    report = world.svc.ingest.ingest_backlog(
        ingestor, str(git.root), world.repo, routing="defaults: {policy: store}\n"
    )
    assert report["pii"]["redacted_files"] == 0
    element_id = element_id_for(world.repo, str(git.root.resolve()), "backlog/payments.md")
    body = world.svc.elements.get_element(world.curator, element_id)["version"]["body"]
    assert CARD in body
    assert KEY in body
