"""The permission-trimming model shared by the property test and ``bench.bench_trimming``.

A corpus of three repositories holding canonical and evidence documents of every
classification, relationships across classifications and two promotions; a ``Case`` gives a
fresh principal several grants per repository, each with its own role and clearance (an
``ingestor`` grant among them), and one read. ``run_case`` returns the violations: anything
returned, cited, excerpted, walked through or named that the principal may not read, and a
direct element read (``get_element``) that disagrees with the model.

The model is written from product.md, not from ``domain.permissions``: what a principal may
read in a repository is capped by the highest clearance among its grants *whose role allows
reading*; ``ingestor`` allows no reading, so its clearance never counts for reads.
"""

from __future__ import annotations

import itertools
import json
import random
import secrets
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from domain.errors import AmeideError
from runtime import App
from service.authz import Caller
from tests.conftest import ADMIN
from tests.read_world import add_evidence, request

LEVELS = ("public", "internal", "confidential", "restricted")
ROLES = ("reader", "agent", "curator", "publisher", "auditor", "ingestor")
READING_ROLES = frozenset({"reader", "agent", "curator", "publisher", "auditor"})
SELECTORS = ("published", "head")
QUERIES = ("zebra crossing", "secret0q secret5q secret9q", "zebra title:secret3q")
CURATOR = Caller("user:trim-curator", purpose="setup")
PUBLISHER = Caller("user:trim-publisher", purpose="setup")


@dataclass
class Doc:
    """A document of the corpus and the unique word only its body holds."""

    repo: str
    element_id: str
    classification: str
    secret: str


Grants = tuple[tuple[int, str, str], ...]
"""(repository index, role, clearance) per grant; several per repository."""


def held(grants: Grants) -> Grants:
    """The grants in force: granting a role again on the same scope replaces its clearance."""
    last = {(i, role): level for i, role, level in grants}
    return tuple((i, role, level) for (i, role), level in last.items())


@dataclass
class Corpus:
    app: App
    org: str
    repos: list[str]
    docs: list[Doc] = field(default_factory=list)
    t_mid: datetime | None = None

    def read_clearance(self, grants: Grants) -> dict[str, int]:
        """Repository → read clearance rank, from the grants whose role allows reading."""
        out: dict[str, int] = {}
        for i, role, level in held(grants):
            if role in READING_ROLES:
                repo = self.repos[i]
                out[repo] = max(out.get(repo, -1), LEVELS.index(level))
        return out

    def readable(self, grants: Grants) -> set[str]:
        """Element ids a principal holding ``grants`` may read."""
        cleared = self.read_clearance(grants)
        return {
            d.element_id
            for d in self.docs
            if d.repo in cleared and LEVELS.index(d.classification) <= cleared[d.repo]
        }


@dataclass(frozen=True)
class Case:
    """One generated read."""

    grants: Grants
    org_wide: bool = False
    selector: str = "published"
    past: bool = False
    hops: int = 0
    max_items: int = 5
    query: str = QUERIES[0]
    probe: int = 0  # the document read directly with get_element


def _body(title: str, secret: str, n: int) -> str:
    words = " ".join(f"w{n}x{i}" for i in range(12))
    return f"# {title}\n\nzebra crossing notes {secret} {words}.\n"


def build_corpus(app: App) -> Corpus:
    """Three repositories of a fresh organization, documents of every classification."""
    svc = app.service
    svc.bootstrap_admin(ADMIN.principal_id)
    org = f"trim{secrets.token_hex(3)}/eng"
    c = Corpus(app, org, [f"{org}/r{i}" for i in range(3)])
    for repo in c.repos:
        svc.create_repository(ADMIN, repo)
        svc.grant(ADMIN, CURATOR.principal_id, "curator", repo, "restricted")
        svc.grant(ADMIN, PUBLISHER.principal_id, "publisher", repo, "restricted")
    n = itertools.count()
    for repo, level, kind in itertools.product(c.repos, LEVELS, ("canonical", "evidence")):
        i = next(n)
        secret = f"secret{i}q"
        if kind == "canonical":
            out = svc.create_element(
                CURATOR, repo, title=f"Doc {i}", body=_body("Doc", secret, i), classification=level
            )
            element_id = out["element"]["element_id"]
        else:
            element_id, _ = add_evidence(
                app, repo, f"d{i}.md", _body("Ev", secret, i), classification=level
            )
        c.docs.append(Doc(repo, element_id, level, secret))
    for repo in c.repos:
        mine = [d for d in c.docs if d.repo == repo]
        for a, b in itertools.pairwise(mine):
            svc.add_relationship(
                CURATOR, a.element_id, b.element_id, kind="REFERENCE", type_key="ameide:cites"
            )
    for repo in c.repos[:2]:
        baseline = svc.create_baseline(PUBLISHER, repo)["baseline_id"]
        svc.promote(PUBLISHER, baseline, repo, "first")
    c.t_mid = svc.clock.now()
    return c


def random_case(rng: random.Random, n_docs: int) -> Case:
    """A case drawn from the same space the property test's strategies cover."""
    grants = tuple(
        (rng.randrange(3), rng.choice(ROLES), rng.choice(LEVELS)) for _ in range(rng.randrange(5))
    )
    return Case(
        grants=grants,
        org_wide=rng.random() < 0.5,
        selector=rng.choice(SELECTORS),
        past=rng.random() < 0.5,
        hops=rng.randrange(3),
        max_items=rng.randint(1, 12),
        query=rng.choice(QUERIES),
        probe=rng.randrange(n_docs),
    )


def run_case(c: Corpus, case: Case) -> list[str]:
    """Grant, read, and list every way the answer breaks the model (empty: none)."""
    svc = c.app.service
    caller = Caller(f"agent:p{secrets.token_hex(6)}", purpose="property")
    for i, role, level in case.grants:
        svc.grant(ADMIN, caller.principal_id, role, c.repos[i], level)
    readable = c.readable(case.grants)
    cleared = c.read_clearance(case.grants)
    problems: list[str] = []

    probe = c.docs[case.probe % len(c.docs)]
    try:
        shown = svc.get_element(caller, probe.element_id)["element"]["element_id"]
    except AmeideError as exc:
        if probe.element_id in readable:
            problems.append(f"readable {probe.element_id} refused: {exc.code}")
        elif exc.code != "NOT_FOUND":
            problems.append(f"unreadable {probe.element_id} answered {exc.code}, not NOT_FOUND")
    else:
        if shown not in readable:
            problems.append(f"get_element returned unreadable {shown}")

    req = request(
        c.repos[0],
        case.query,
        selector=case.selector,
        explain=True,
        expand={"hops": case.hops, "max_nodes": 5},
        budget={"max_items": case.max_items, "max_chars": 100_000},
        as_of=c.t_mid.isoformat() if case.past and c.t_mid else None,
    )
    if case.org_wide:
        req["scope"].pop("repository_id")
    may_read = bool(cleared) if case.org_wide else c.repos[0] in cleared
    try:
        out = svc.read_context(caller, req)
    except AmeideError as exc:
        if may_read:
            problems.append(f"read_context refused a permitted read: {exc.code}")
        return problems
    if not may_read:
        problems.append("read_context answered a caller who may read nothing in scope")
    text = json.dumps({**out, "trace": {**out["trace"], "query_rewrite": None}})
    hidden = [d for d in c.docs if d.element_id not in readable]
    for d in hidden:
        for leaked in (d.secret, d.element_id):
            if leaked in text:
                problems.append(f"{d.classification} {d.element_id} leaked ({leaked})")
    for item in out["items"]:
        named: set[str] = {item["element_id"]}
        named |= {cit["element_id"] for cit in item["citations"]}
        for step in item["relationship_path"]:
            named |= {step["from_element_id"], step["to_element_id"]}
        for element_id in named - readable:
            problems.append(f"item names unreadable {element_id}")
    return sorted(set(problems))


def describe(case: Case) -> dict[str, Any]:
    """A case as JSON (for reports of violations)."""
    return {
        "grants": [list(g) for g in case.grants],
        "org_wide": case.org_wide,
        "selector": case.selector,
        "past": case.past,
        "hops": case.hops,
        "max_items": case.max_items,
        "query": case.query,
        "probe": case.probe,
    }
