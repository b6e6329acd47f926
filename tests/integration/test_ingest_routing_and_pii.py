"""Routing rules and the PII barrier end to end: files land in the repositories the rules name
(only where the caller may ingest), redacted content is what gets stored, rejected files write
nothing, and the run report counts it all."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from domain.errors import InvalidArgument, NotFound
from ingest.plan import element_id_for
from ingest.screening.pii import luhn_valid
from runtime import App
from service.authz import Caller
from tests.conftest import World, make_world
from tests.integration.ingest.conftest import GitRepo

ROUTING = """
version: 1
defaults: {classification: internal, policy: store, tags: [backlog]}
rules:
  - name: secrets
    override: true
    match: {all: [{field: signals.pii_kinds, contains: secret}]}
    actions: {policy: reject}
  - name: personal-data
    override: true
    match: {all: [{field: signals.pii_detected, equals: true}]}
    actions: {policy: redact, classification: confidential, tags: [pii-redacted]}
  - name: security
    priority: 20
    match: {any: [{field: path, glob: "backlog/security/**"}]}
    actions: {repository: security-backlog, classification: confidential}
  - name: teams
    priority: 10
    match: {all: [{field: front_matter.team, present: true}]}
    actions: {repository: "team-{front_matter.team}", tags: [team]}
  - name: owned
    match: {all: [{field: path, glob: "owned/**"}]}
    actions: {repository: "team-{front_matter.owner}"}
"""
SPACED_CARD = "4111 1111 1111 1111"
UNSPACED_CARD = "5500005555555559"
PAY = f"""---
team: payments
---
# Payments

Charge card {SPACED_CARD} or {UNSPACED_CARD}.
Questions to jane.doe@pay.example.com, or 4012888888881881@cards.example.org.
"""


class Routed:
    """A world with sibling repositories in its organization and an ingestor on some."""

    def __init__(self, world: World, git: GitRepo) -> None:
        self.world, self.git = world, git
        tenant, org, _ = world.repo.split("/")
        self.org = f"{tenant}/{org}"
        self.ingestor = Caller(f"service:ingest-{tenant}")
        for name in ("team-payments", "team-billing", "security-backlog"):
            world.svc.admin.create_repository(world.admin, f"{self.org}/{name}")
        for repo in (world.repo, f"{self.org}/team-payments", f"{self.org}/team-billing"):
            # the rules classify up to confidential; ingest never writes above its clearance
            world.svc.admin.grant(
                world.admin, self.ingestor.principal_id, "ingestor", repo, clearance="confidential"
            )
            world.svc.admin.grant(world.admin, world.auditor.principal_id, "auditor", repo)
        # the auditor may read what the rules classify confidential
        for repo in (f"{self.org}/team-payments", f"{self.org}/team-billing"):
            world.svc.admin.grant(
                world.admin, world.auditor.principal_id, "reader", repo, clearance="confidential"
            )

    def run(self, routing: str = ROUTING) -> dict:
        return self.world.svc.ingest.ingest_backlog(
            self.ingestor, str(self.git.root), self.world.repo, routing=routing
        )

    def eid(self, repo: str, path: str) -> str:
        return element_id_for(repo, str(self.git.root.resolve()), path)

    def elements_in(self, repo: str) -> int:
        with self.world.app.engine.connect() as conn:
            return conn.execute(
                sa.text("SELECT count(*) FROM elements WHERE repo_key = :r"), {"r": repo}
            ).scalar_one()


@pytest.fixture
def routed(any_app: App, tmp_path: Path) -> Routed:
    return Routed(make_world(any_app), GitRepo(tmp_path / "backlog"))


def commit_backlog(git: GitRepo) -> str:
    git.write("backlog/plain.md", "# Plain\n\nNothing sensitive here.\n")
    git.write("backlog/pay.md", PAY)
    git.write("backlog/key.md", "# Deploy\n\naws key AKIAIOSFODNN7EXAMPLE for the pipeline\n")
    git.write("backlog/security/threats.md", "# Threat model\n\nAttackers everywhere.\n")
    git.write("backlog/ghost.md", "---\nteam: ghost\n---\n# Ghost team\n")
    git.write("owned/orphan.md", "# Nobody owns me\n")
    return git.commit("a backlog that needs routing")


def test_rules_route_files_and_the_pii_barrier_redacts_or_rejects(routed):
    assert luhn_valid(SPACED_CARD.replace(" ", ""))
    assert luhn_valid(UNSPACED_CARD)
    commit_backlog(routed.git)
    report = routed.run()
    payments = f"{routed.org}/team-payments"

    assert report["counts"]["new"] == 2
    assert report["skipped_by_code"] == {"forbidden": 2, "rejected": 1, "routing": 1}
    skipped = {s["path"]: s for s in report["skipped"]}
    assert "routed to" in skipped["backlog/security/threats.md"]["reason"]
    assert skipped["backlog/ghost.md"]["reason"] == (
        f"routed to {routed.org}/team-ghost, which does not exist or where "
        f"{routed.ingestor.principal_id} may not ingest"
    )  # a missing repository and a forbidden one read the same
    assert "front_matter.owner" in skipped["owned/orphan.md"]["reason"]
    assert "secret" in skipped["backlog/key.md"]["reason"]
    assert report["pii"]["redacted_files"] == 1
    # a card number used as an e-mail's local part counts once, as a card; both are masked
    assert report["pii"]["redacted"] == {"email": 1, "payment_card": 3}
    assert report["pii"]["rejected_files"] == 1
    assert report["pii"]["rejected"] == {"secret:aws": 1}
    assert report["repositories"] == sorted([routed.world.repo, payments])

    shown = routed.world.svc.elements.get_element(
        routed.world.auditor, routed.eid(payments, "backlog/pay.md")
    )
    body = shown["version"]["body"]
    assert not any(ch.isdigit() for ch in body), body  # no digit of any card survives
    for fragment in ("jane", "doe", "pay.example", "cards.example", "@"):
        assert fragment not in body
    assert "# Payments" in body
    assert shown["element"]["classification"] == "confidential"
    metadata = shown["version"]["metadata"]
    assert metadata["pii_redacted"] == {"email": 1, "payment_card": 3}
    assert metadata["tags"] == ["backlog", "team", "pii-redacted"]
    assert metadata["routing_rule"] == "'teams' (#4)"
    assert metadata["routing_override"] == "'personal-data' (#2)"

    assert routed.elements_in(f"{routed.org}/security-backlog") == 0
    for repo in (routed.world.repo, payments, f"{routed.org}/security-backlog"):
        with pytest.raises(NotFound):
            routed.world.svc.elements.get_element(
                routed.world.admin, routed.eid(repo, "backlog/key.md")
            )
    events = routed.world.svc.history.history(routed.world.auditor, payments)
    assert [e["event_type"] for e in events].count("element.created") == 1


def test_a_file_whose_edit_routes_it_elsewhere_moves_to_a_new_element(routed):
    commit_backlog(routed.git)
    routed.run()
    payments, billing = f"{routed.org}/team-payments", f"{routed.org}/team-billing"
    routed.git.write("backlog/pay.md", PAY.replace("team: payments", "team: billing"))
    routed.git.commit("billing owns payments now")
    report = routed.run()
    assert report["counts"]["new"] == 1
    assert report["counts"]["retired"] == 1
    old = routed.world.svc.elements.get_element(
        routed.world.auditor, routed.eid(payments, "backlog/pay.md")
    )
    new = routed.world.svc.elements.get_element(
        routed.world.auditor, routed.eid(billing, "backlog/pay.md")
    )
    assert old["element"]["retired_at"] is not None
    assert new["element"]["retired_at"] is None


def test_a_malformed_rule_file_is_refused_with_an_error_naming_the_rule(routed):
    commit_backlog(routed.git)
    rules = (
        "rules:\n  - name: fine\n    actions: {policy: store}\n"
        "  - name: broken\n    match: {all: [{field: signals.word_count, gte: many}]}\n"
        "    actions: {policy: store}\n"
    )
    with pytest.raises(InvalidArgument) as caught:
        routed.world.svc.ingest.ingest_backlog(
            routed.ingestor, str(routed.git.root), routed.world.repo, routing=rules
        )
    assert "rule 2 'broken' (rules[1])" in caught.value.message
    assert any("broken" in error for error in caught.value.details["errors"])
    assert routed.elements_in(routed.world.repo) == 0


@pytest.mark.parametrize(
    ("rules", "where"),
    [
        (
            'defaults: {tags: ["tag\\ud800x"]}\n',
            "defaults.tags[0]",
        ),
        (
            'rules:\n  - name: teams\n    actions: {tags: [ok, "t\\udfff"]}\n',
            "rule 1 'teams' (rules[0]): actions.tags[1]",
        ),
    ],
    ids=["defaults", "a rule's tags"],
)
def test_a_rule_file_holding_a_lone_surrogate_is_refused_before_anything_is_written(
    routed, rules, where
):
    """A routing file's ``"\\ud800"`` escape used to be stored in the tags of every element
    ingested, which no surface could then serve (500 on REST, a crash over MCP stdio)."""
    commit_backlog(routed.git)
    with pytest.raises(InvalidArgument) as caught:
        routed.world.svc.ingest.ingest_backlog(
            routed.ingestor, str(routed.git.root), routed.world.repo, routing=rules
        )
    assert f"{where}: not valid Unicode text (it holds a lone surrogate)" in caught.value.message
    assert routed.elements_in(routed.world.repo) == 0


def test_routing_explain_shows_the_winning_rules_and_why(routed):
    explained = routed.world.svc.ingest.routing_explain(
        None, ROUTING, "backlog/pay.md", PAY.encode(), repo=routed.world.repo
    )
    decision = explained["decision"]
    assert decision["repository"] == f"{routed.org}/team-payments"
    assert decision["policy"] == "redact"
    assert (decision["rule"], decision["override_rule"]) == ("'teams' (#4)", "'personal-data' (#2)")
    verdicts = {rule["rule"]: rule["matched"] for rule in explained["rules"]}
    assert verdicts == {
        "'secrets' (#1)": False,
        "'security' (#3)": False,
        "'teams' (#4)": True,
        "'personal-data' (#2)": True,
        "'owned' (#5)": False,
    }
    assert explained["signals"]["pii_detected"] is True

    missing = routed.world.svc.ingest.routing_explain(None, ROUTING, "owned/x.md", b"# x\n")
    assert missing["decision"] is None
    assert "front_matter.owner" in missing["error"]
    hostile = routed.world.svc.ingest.routing_explain(None, ROUTING, "a/../b.md", b"# x\n")
    assert hostile["skipped"]["code"] == "unsafe_path"


def test_new_rules_reclassify_unchanged_files_on_a_full_scan(routed):
    commit_backlog(routed.git)
    routed.run()
    stricter = ROUTING + (
        "  - name: plain-is-public\n    priority: 30\n"
        "    match: {all: [{field: path, glob: backlog/plain.md}]}\n"
        "    actions: {classification: public}\n"
    )
    report = routed.world.svc.ingest.ingest_backlog(
        routed.ingestor, str(routed.git.root), routed.world.repo, routing=stricter, full_scan=True
    )
    # lowered to public: one new version at that level (the internal one keeps its level)
    assert report["versions_written"] == 1
    plain = routed.eid(routed.world.repo, "backlog/plain.md")
    shown = routed.world.svc.elements.get_element(routed.world.auditor, plain)
    assert shown["element"]["classification"] == "public"
    events = routed.world.svc.history.history(
        routed.world.auditor, routed.world.repo, element_id=plain
    )
    assert [e["event_type"] for e in events][-2:] == ["element.reclassified", "version.created"]
