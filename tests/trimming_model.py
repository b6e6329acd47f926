"""The permission-trimming model shared by the property test and ``bench.bench_trimming``.

A corpus of three repositories holding canonical and evidence documents of every
classification, relationships across classifications and two promotions; a ``Case`` gives a
fresh principal several grants per repository, each with its own role and clearance (an
``ingestor`` grant among them), and one read. ``run_case`` returns the violations: anything
returned, cited, excerpted, walked through or named that the principal may not read, and a
direct element read (``get_element``) that disagrees with the model.

The model is written from docs/product.md, not from ``domain.permissions``: what a principal may
read in a repository is capped by the highest clearance among its grants *whose role allows
reading*; ``ingestor`` allows no reading, so its clearance never counts for reads.

Three side paths of issue #16 are part of the corpus and of every case:

- **reclassification**: a file ingested (for real, from a git repository) under a restricted
  routing default, then changed and re-ingested with the default lowered to public: the element
  is public, its first version stays restricted — at ``as_of`` instants when it was the head
  too, and when read directly by version id;
- **erasure of derived proposals**: a canonical version, a proposal pinned to it that quotes it,
  the rebase of that proposal, then the version erased: its text never shows to anyone, through
  reads or the proposals' own elements;
- **history of the reclassified element** (issue 28 item 9): the repository's history, the
  element's and an ``as_of`` neighbourhood name neither the restricted first version's id nor
  its hash to a principal not cleared for restricted there;
- **erasure by a lower admin** (issue 28 item 4): an admin cleared for internal erases an
  internal copy of a restricted document's text; the report counts no copy, and the restricted
  version stays whole for whoever may read it;
- **cross-tenant statistics**: some cases add a document holding the query words to another
  tenant that no generated principal can read, and the same read must then return the same
  items with the same scores.
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
from edge.results import as_json
from runtime import App
from service.authz import Caller
from tests.conftest import ADMIN, INDEX_ENGINE
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
    lowered: Doc | None = None
    """The element lowered from restricted to public by routing (its ``secret`` is the first,
    restricted version's word; the current version does not hold it)."""
    lowered_v1: str = ""
    lowered_v1_sha: str = ""
    guessed: Doc | None = None
    """A restricted document of repos[2] whose text a lower admin guessed and erased a copy of."""
    guessed_v: str = ""
    guess_report: dict[str, Any] = field(default_factory=dict)
    erased_secret: str = "erasedzq"
    derived_elements: list[str] = field(default_factory=list)
    """Proposal body elements derived from the erased version."""
    other_repo: str = ""
    """A repository of another tenant no generated principal is granted anything in."""
    t_restricted: datetime | None = None
    """An instant at which the lowered element's head was its restricted first version."""

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

    def secrets_hidden(self, grants: Grants) -> set[str]:
        """Words a principal holding ``grants`` must never see: the erased text always, and
        the lowered element's restricted first version unless cleared for restricted there."""
        out = {self.erased_secret}
        if self.lowered is not None:
            cleared = self.read_clearance(grants).get(self.lowered.repo, -1)
            if cleared < LEVELS.index("restricted"):
                out.add(self.lowered.secret)
        return out


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
    stats_probe: bool = False  # add a forbidden document elsewhere; the read must not change


def _body(title: str, secret: str, n: int) -> str:
    words = " ".join(f"w{n}x{i}" for i in range(12))
    return f"# {title}\n\nzebra crossing notes {secret} {words}.\n"


def build_corpus(app: App) -> Corpus:
    """Three repositories of a fresh organization, documents of every classification."""
    svc = app.service
    svc.admin.bootstrap_admin(ADMIN.principal_id)
    org = f"trim{secrets.token_hex(3)}/eng"
    c = Corpus(app, org, [f"{org}/r{i}" for i in range(3)])
    for repo in c.repos:
        svc.admin.create_repository(ADMIN, repo)
        svc.admin.grant(ADMIN, CURATOR.principal_id, "curator", repo, "restricted")
        svc.admin.grant(ADMIN, PUBLISHER.principal_id, "publisher", repo, "restricted")
    n = itertools.count()
    for repo, level, kind in itertools.product(c.repos, LEVELS, ("canonical", "evidence")):
        i = next(n)
        secret = f"secret{i}q"
        if kind == "canonical":
            out = svc.elements.create_element(
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
            svc.elements.add_relationship(
                CURATOR, a.element_id, b.element_id, kind="REFERENCE", type_key="ameide:cites"
            )
    _lowered_by_routing(c)
    _erased_with_derived_proposals(c)
    _erased_by_a_lower_admin(c)
    for repo in c.repos[:2]:
        baseline = svc.publishing.create_baseline(PUBLISHER, repo)["baseline_id"]
        svc.publishing.promote(PUBLISHER, baseline, repo, "first")
    c.t_mid = app.clock.now()
    c.other_repo = f"other{secrets.token_hex(3)}/eng/r"
    svc.admin.create_repository(ADMIN, c.other_repo)
    return c


def _lowered_by_routing(c: Corpus) -> None:
    """Ingest a real git repository into repos[1] as restricted, then change the file and
    lower the routing default to public (a full-scan re-ingest)."""
    import subprocess
    import tempfile
    import time
    from pathlib import Path

    svc = c.app.service
    ingestor = Caller("service:trim-ingest", purpose="setup")
    svc.admin.grant(ADMIN, ingestor.principal_id, "ingestor", c.repos[1], "restricted")
    src = Path(tempfile.mkdtemp(prefix="trim-src-"))
    git = ["git", "-C", str(src), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(src)], check=True)
    rules = {
        level: f"defaults: {{classification: {level}}}\n" for level in ("restricted", "public")
    }
    (src / "plan.md").write_text(_body("Plan", "loweredq", 90), "utf-8")
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "plan"], check=True)
    svc.ingest.ingest_backlog(ingestor, str(src), c.repos[1], routing=rules["restricted"])
    report = svc.ingest.ingest_status(ADMIN, c.repos[1])
    assert report["sources"], "the lowered document was not ingested"
    from ingest.plan import element_id_for

    element_id = element_id_for(c.repos[1], str(src.resolve()), "plan.md")
    v1 = svc.elements.get_element(ADMIN, element_id)["version"]
    c.lowered_v1, c.lowered_v1_sha = v1["version_id"], v1["content_sha256"]
    time.sleep(0.002)
    c.t_restricted = c.app.clock.now()
    time.sleep(0.002)
    (src / "plan.md").write_text(_body("Plan", "publicplanq", 91), "utf-8")
    subprocess.run([*git, "commit", "-qam", "plan, public now"], check=True)
    svc.ingest.ingest_backlog(
        ingestor, str(src), c.repos[1], routing=rules["public"], full_scan=True
    )
    c.lowered = Doc(c.repos[1], element_id, "public", "loweredq")
    c.docs.append(Doc(c.repos[1], element_id, "public", "publicplanq"))


def _erased_with_derived_proposals(c: Corpus) -> None:
    """A canonical version in repos[0], a proposal quoting it, that proposal rebased, then
    the version erased."""
    svc = c.app.service
    agent = Caller("agent:trim-agent", purpose="setup")
    svc.admin.grant(ADMIN, agent.principal_id, "agent", c.repos[0], "restricted")
    text = _body("Erased", c.erased_secret, 95)
    out = svc.elements.create_element(CURATOR, c.repos[0], title="Erased doc", body=text)
    el, v1 = out["element"]["element_id"], out["version"]["version_id"]
    first = svc.curation.propose(
        agent, c.repos[0], body=text + "\nOne more line.\n", summary="more",
        element_id=el, target_version_id=v1,
    )  # fmt: skip
    other = svc.curation.propose(
        agent, c.repos[0], body="# Erased\n\nzebra crossing, rewritten.\n", summary="rewrite",
        element_id=el, target_version_id=v1,
    )  # fmt: skip
    svc.review.accept(CURATOR, other["proposal_id"])
    rebased = svc.review.rebase(agent, first["proposal_id"])
    svc.erasure.erase_version(ADMIN, v1, "property test")
    c.derived_elements = [
        svc.curation.proposal_show(CURATOR, p)["proposal_element_id"]
        for p in (first["proposal_id"], rebased["proposal_id"])
    ]
    c.docs.append(Doc(c.repos[0], el, "internal", "rewrittenq-none"))


def _erased_by_a_lower_admin(c: Corpus) -> None:
    """A restricted document in repos[2]; an admin there cleared only for internal creates an
    internal element with the same text and erases it (a right guess, issue 28 item 4)."""
    svc = c.app.service
    body = _body("Guess", "guessedq", 97)
    out = svc.elements.create_element(
        CURATOR, c.repos[2], title="Guessed", body=body, classification="restricted"
    )
    c.guessed = Doc(c.repos[2], out["element"]["element_id"], "restricted", "guessedq")
    c.guessed_v = out["version"]["version_id"]
    c.docs.append(c.guessed)
    low = Caller("user:trim-low-admin", purpose="setup")
    svc.admin.grant(ADMIN, low.principal_id, "admin", c.repos[2], "internal")
    copy = svc.elements.create_element(
        low, c.repos[2], title="Guess", body=body, classification="internal"
    )
    c.guess_report = svc.erasure.erase_version(low, copy["version"]["version_id"], "probe")[
        "erasure"
    ]


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
        stats_probe=rng.random() < 0.05,
    )


def run_case(c: Corpus, case: Case) -> list[str]:
    """Grant, read, and list every way the answer breaks the model (empty: none)."""
    svc = c.app.service
    caller = Caller(f"agent:p{secrets.token_hex(6)}", purpose="property")
    for i, role, level in case.grants:
        svc.admin.grant(ADMIN, caller.principal_id, role, c.repos[i], level)
    readable = c.readable(case.grants)
    cleared = c.read_clearance(case.grants)
    problems: list[str] = []

    never = c.secrets_hidden(case.grants)
    probe = c.docs[case.probe % len(c.docs)]
    try:
        shown = svc.elements.get_element(caller, probe.element_id)["element"]["element_id"]
    except AmeideError as exc:
        if probe.element_id in readable:
            problems.append(f"readable {probe.element_id} refused: {exc.code}")
        elif exc.code != "NOT_FOUND":
            problems.append(f"unreadable {probe.element_id} answered {exc.code}, not NOT_FOUND")
    else:
        if shown not in readable:
            problems.append(f"get_element returned unreadable {shown}")
    problems += _side_paths(c, caller, never, case.grants)

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
        out = svc.reading.read_context(caller, req)
    except AmeideError as exc:
        if may_read:
            problems.append(f"read_context refused a permitted read: {exc.code}")
        return problems
    if not may_read:
        problems.append("read_context answered a caller who may read nothing in scope")
    if case.stats_probe and INDEX_ENGINE != "tantivy":
        # (tantivy's BM25 statistics cover the whole index: a known, documented difference,
        # test_search_statistics_isolation.py expects it to fail there)
        # a document the caller can never read, holding every query word, in another tenant
        words = " ".join(q.replace("title:", "") for q in QUERIES)
        # Whoosh names new segments with the global ``random``, which Hypothesis seeds the same
        # for every example: reseed it, or two examples' segments would get the same name.
        random.seed(secrets.randbits(64))
        add_evidence(c.app, c.other_repo, f"s{secrets.token_hex(4)}.md", f"# {words}\n\n{words}\n")
        again = svc.reading.read_context(caller, req)
        if _ranked(again) != _ranked(out):
            problems.append("a forbidden document in another tenant changed scores or order")
    text = json.dumps({**out, "trace": {**out["trace"], "query_rewrite": None}})
    for word in never:
        if word in text:
            problems.append(f"hidden text {word} shown by read_context")
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


def _ranked(out: dict[str, Any]) -> list[tuple[str, str, float]]:
    return [(i["element_id"], i["version_id"], i["score"]) for i in out["items"]]


def _side_paths(c: Corpus, caller: Caller, never: set[str], grants: Grants) -> list[str]:
    """Reads of the reclassified version, of the element at the instant it was restricted, and
    of the erased version's derived proposals: none may show what ``never`` holds."""
    svc = c.app.service
    problems: list[str] = []
    reads = []
    never = set(never)
    if c.lowered is not None:
        el, repo = c.lowered.element_id, c.lowered.repo
        if c.lowered.secret in never:  # not cleared for restricted there: nor its id and hash
            never |= {c.lowered_v1, c.lowered_v1_sha}
        reads.append(lambda: svc.elements.get_element(caller, el, version_id=c.lowered_v1))
        reads.append(lambda: svc.elements.get_element(caller, el, as_of=c.t_restricted))
        reads.append(lambda: svc.reading.get_version(caller, c.lowered_v1))
        reads.append(lambda: svc.elements.element_history(caller, el))
        reads.append(lambda: svc.elements.get_element(caller, el))
        reads.append(lambda: svc.reading.expand(caller, el, as_of=c.t_restricted))
        if c.read_clearance(grants).get(repo, -1) >= 0:  # else PERMISSION_DENIED, rightly
            reads.append(lambda: svc.history.history(caller, repo))
            reads.append(lambda: svc.history.history(caller, repo, element_id=el))
    if c.guessed is not None:
        problems += _guess_untouched(c, caller, grants)
    for derived in c.derived_elements:
        reads.append(lambda derived=derived: svc.elements.get_element(caller, derived))
        reads.append(lambda derived=derived: svc.elements.element_history(caller, derived))
    for read in reads:
        try:
            text = json.dumps(as_json(read()))
        except AmeideError as exc:
            if exc.code != "NOT_FOUND":
                problems.append(f"a side-path read answered {exc.code}, not NOT_FOUND")
            continue
        problems += [
            f"hidden text {word} shown by a side-path read" for word in never if word in text
        ]
    return problems


def _guess_untouched(c: Corpus, caller: Caller, grants: Grants) -> list[str]:
    """The lower admin's erasure counted no copy, and the restricted version it guessed is
    whole for a caller cleared for it."""
    svc = c.app.service
    problems = []
    if any(c.guess_report[k] for k in ("copies_erased", "derived_erased")):
        problems.append(f"a lower admin's erasure reached above its clearance: {c.guess_report}")
    assert c.guessed is not None
    if c.read_clearance(grants).get(c.guessed.repo, -1) >= LEVELS.index("restricted"):
        shown = svc.reading.get_version(caller, c.guessed_v)["version"]
        if shown["erased"] or c.guessed.secret not in shown["body"]:
            problems.append("a lower admin's erasure of a copy erased the restricted version")
    return problems


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
        "stats_probe": case.stats_probe,
    }
