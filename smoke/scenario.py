"""docs/product.md §9, "How do I run tests?", written once against a ``Surface``.

Each step checks real outcomes, not just that a call returned:

1. ingest → evidence elements exist, each cited with its source, commit and path;
2. a curator writes the canonical Testing SOP, a publisher promotes a baseline pinning it;
3. the agent's published read has the SOP first (the version just published), every citation's
   offsets slice exactly the text the item shows, evidence ranks below;
4. the agent proposes an update pinned to that version;
5. a curator accepts a competing change first → the proposal is stale, accepting it is refused
   with ``STALE_PROPOSAL``, the rebase merges both changes, the accept writes version 3;
6. the publisher promotes → a published read returns version 3, an ``as_of`` read at step 3's
   instant returns version 1;
7. a principal without a grant gets exactly the answer a missing repository (or element) gets,
   for reads and proposals; ``verify_citations`` accepts a returned citation and rejects one to
   another version of the element and an invented one;
8. the SOP cites an evidence file, the backlog is registered as a source, a commit changes the
   file, the source's run brings it in → the SOP is listed as drifted with the evidence's diff.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from smoke.checks import ScenarioState, refused, same_answer, sop_first
from smoke.content import (
    AGENT,
    CURATOR,
    EDITOR,
    INGESTOR,
    OUTSIDER,
    PUBLISHER,
    QUESTION,
    SOP_CLARIFIED,
    SOP_MERGED,
    SOP_TITLE,
    SOP_TYPE,
    SOP_V1,
    SOP_WITH_PHASE_3,
    make_backlog,
)
from smoke.runner import StepSkipped, expect
from smoke.surface import Read, Surface

INVENTED_VERSION = "ver_" + "0" * 24
INVENTED_ELEMENT = "el_" + "0" * 24


class Scenario:
    """The steps of §9 on one surface; ``steps()`` lists them in order."""

    def __init__(self, surface: Surface, state: ScenarioState, backlog: Path | None) -> None:
        self.s = surface
        self.state = state
        self.backlog = backlog  # where to make the backlog's git repository; None: no ingest

    def steps(self) -> list[tuple[str, Callable[[], str]]]:
        """(name, run) in scenario order."""
        return [
            ("ingest", self.ingest),
            ("publish-sop", self.publish_sop),
            ("read-published", self.read_published),
            ("propose", self.propose),
            ("stale", self.stale),
            ("refused-accept", self.refused_accept),
            ("rebase", self.rebase),
            ("accept", self.accept),
            ("promote", self.promote),
            ("read-new", self.read_new),
            ("as-of-old", self.as_of_old),
            ("no-grant-read", self.no_grant_read),
            ("no-grant-propose", self.no_grant_propose),
            ("on-behalf-refused", self.on_behalf_refused),
            ("verify-citations-rejects", self.verify_citations_rejects),
            ("sync-and-drift", self.sync_and_drift),
        ]

    # -- 1. ingest -------------------------------------------------------------------------
    def ingest(self) -> str:
        """The backlog becomes evidence with provenance."""
        st = self.state
        if self.backlog is None:
            raise StepSkipped("no network surface ingests: the scenario runs without evidence")
        backlog = make_backlog(self.backlog)
        report = self.s.ingest(st.repo, backlog.path)
        if report is None:
            raise StepSkipped("this surface cannot ingest: the scenario runs without evidence")
        new, commit = report["counts"]["new"], report["to_commit"]
        expect(new >= 1, f"ingest mirrored no file: counts {report['counts']}")
        self.s.check_index()
        found = []
        for via in self.s.readers:
            ctx = self.s.read_context(AGENT, Read(st.repo, QUESTION, selector="head"), via)
            evidence = [i for i in ctx["items"] if i["source_kind"] == "INGESTED_EVIDENCE"]
            expect(evidence, f"no ingested evidence answers the question via {via}")
            for item in evidence:
                prov = item["provenance"]
                expect(
                    prov.get("source_repo") == report["source_repo"]
                    and prov.get("commit_sha") == commit
                    and prov.get("path")
                    and prov.get("actor_id") == INGESTOR,
                    f"evidence {item['element_id']} via {via} lacks its provenance: {prov}",
                )
            found.append(len(evidence))
        st.evidence = True
        return (
            f"{new} of {backlog.files} files of {backlog.origin} mirrored at "
            f"{commit[:12]}; {'/'.join(map(str, found))} evidence items with provenance via "
            f"{'/'.join(self.s.readers)}"
        )

    # -- 2. the SOP, published -------------------------------------------------------------
    def publish_sop(self) -> str:
        """A curator writes the SOP; a publisher promotes a baseline pinning version 1."""
        st = self.state
        made = self.s.create_element(CURATOR, st.repo, SOP_TITLE, SOP_V1, SOP_TYPE)
        st.sop, st.v1 = made["element"]["element_id"], made["version"]["version_id"]
        expect(made["element"]["source_kind"] == "CANONICAL", "the SOP is not canonical")
        baseline = self.s.create_baseline(PUBLISHER, st.repo, "smoke: SOP v1")
        st.first_baseline = baseline["baseline_id"]
        pins = {p["element_id"]: p["version_id"] for p in baseline["pins"]}
        expect(pins.get(st.sop) == st.v1, f"the baseline pins {pins.get(st.sop)}, not {st.v1}")
        self.s.promote(PUBLISHER, st.first_baseline, st.repo, "smoke: first publication")
        published = self.s.published(PUBLISHER, st.repo)
        expect(
            published.get("baseline_id") == st.first_baseline,
            f"published is {published.get('baseline_id')}, not {st.first_baseline}",
        )
        return f"SOP {st.sop} v1 {st.v1} published in baseline {st.first_baseline}"

    # -- 3. the agent's published read ------------------------------------------------------
    def read_published(self) -> str:
        """The SOP first, with exact, version-pinned citations; evidence below."""
        st = self.state
        index = self.s.check_index()
        shown = []
        for via in self.s.readers:
            ctx = self.s.read_context(AGENT, Read(st.repo, QUESTION), via)
            shown.append(sop_first(self.s, st, ctx, st.v1, via))
            st.contexts[via] = ctx
            st.read_at = st.read_at or ctx["selector_used"]["resolved_at"]
        return f"{index}; " + "; ".join(shown)

    # -- 4. propose --------------------------------------------------------------------------
    def propose(self) -> str:
        """The agent proposes an update pinned to the version it read."""
        st = self.state
        via = self.s.proposers[0]
        p = self.s.propose(
            AGENT, st.repo, st.sop, st.v1, SOP_WITH_PHASE_3, "Add phase 3 (end-to-end tests)", via
        )
        st.proposal = p["proposal_id"]
        expect(p["status"] == "OPEN", f"the proposal is {p['status']}, not OPEN")
        expect(
            p["target_version_id"] == st.v1, f"the proposal is pinned to {p['target_version_id']}"
        )
        expect(not p["stale"], "a proposal on the current head is reported stale")
        return f"{st.proposal} via {via}, OPEN, pinned to {st.v1}"

    # -- 5. stale, refused, rebased, accepted ------------------------------------------------
    def stale(self) -> str:
        """A competing change is accepted first: the agent's proposal is stale."""
        st = self.state
        via = self.s.proposers[-1]
        other = self.s.propose(
            EDITOR, st.repo, st.sop, st.v1, SOP_CLARIFIED, "Say what lint runs", via
        )
        accepted = self.s.accept(CURATOR, other["proposal_id"], "clearer")
        st.v2 = accepted.get("result_version_id") or ""
        expect(accepted["status"] == "ACCEPTED" and st.v2, "the competing change was not accepted")
        self._still_stale()
        return f"competing change via {via} accepted as {st.v2}; {st.proposal} is stale"

    def _still_stale(self) -> dict[str, Any]:
        st = self.state
        shown = self.s.proposal_show(CURATOR, st.proposal)
        expect(
            shown["target_version_id"] == st.v1,
            f"{st.proposal} is pinned to {shown['target_version_id']}, not to {st.v1} "
            "(the version the agent read)",
        )
        expect(
            shown.get("current_head_version_id") == st.v2,
            f"the head is {shown.get('current_head_version_id')}, not {st.v2}",
        )
        expect(shown["status"] == "OPEN" and shown["stale"], f"{st.proposal} is not stale")
        return shown

    def refused_accept(self) -> str:
        """Accepting the stale proposal is refused with STALE_PROPOSAL; nothing moves."""
        st = self.state
        self._still_stale()
        err = refused(lambda: self.s.accept(CURATOR, st.proposal, "smoke"), "accepting it")
        expect(err.code == "STALE_PROPOSAL", f"refused with {err.code}, not STALE_PROPOSAL")
        expect(
            err.status in (None, "FAILED_PRECONDITION", "isError"),
            f"refused with transport status {err.status}, not FAILED_PRECONDITION",
        )
        self._still_stale()
        return f"refused: {err.code}" + (f" ({err.status})" if err.status else "")

    def rebase(self) -> str:
        """The rebase opens a proposal on v2 whose body merges both changes."""
        st = self.state
        new = self.s.rebase(AGENT, st.proposal)
        st.rebased = new["proposal_id"]
        expect(
            new["status"] == "OPEN" and new["target_version_id"] == st.v2,
            f"the rebased proposal is {new['status']} on {new['target_version_id']}",
        )
        expect(not new["has_conflicts"], "the rebase reports conflicts")
        shown = self.s.proposal_show(CURATOR, st.rebased)
        expect(shown.get("body") == SOP_MERGED, "the rebased body does not hold both changes")
        old = self.s.proposal_show(CURATOR, st.proposal)
        expect(
            old["status"] == "REBASED" and old.get("rebased_to") == st.rebased,
            f"{st.proposal} is {old['status']} (rebased_to {old.get('rebased_to')})",
        )
        return f"{st.rebased} OPEN on {st.v2}, both changes merged"

    def accept(self) -> str:
        """The rebased proposal is accepted: version 3 holds the merged body."""
        st = self.state
        accepted = self.s.accept(CURATOR, st.rebased, "phase 3 is real now")
        st.v3 = accepted.get("result_version_id") or ""
        expect(accepted["status"] == "ACCEPTED" and st.v3, "the rebased proposal was not accepted")
        expect(st.v3 not in (st.v1, st.v2), "the accept wrote no new version")
        body = self.s.version_body(AGENT, st.sop, st.v3, self.s.readers[0])
        expect(body == SOP_MERGED, f"version {st.v3} does not hold the merged SOP")
        return f"accepted as {st.v3}"

    # -- 6. promote, read the new version, and the old one as of step 3 ----------------------
    def promote(self) -> str:
        """A second baseline pinning v3 is published."""
        st = self.state
        baseline = self.s.create_baseline(PUBLISHER, st.repo, "smoke: SOP v3")
        st.second_baseline = baseline["baseline_id"]
        pins = {p["element_id"]: p["version_id"] for p in baseline["pins"]}
        expect(pins.get(st.sop) == st.v3, f"the new baseline pins {pins.get(st.sop)}")
        self.s.promote(PUBLISHER, st.second_baseline, st.repo, "smoke: phase 3 added")
        now = self.s.published(PUBLISHER, st.repo).get("baseline_id")
        expect(now == st.second_baseline, f"published is {now}, not {st.second_baseline}")
        return f"baseline {st.second_baseline} published"

    def read_new(self) -> str:
        """The published read now returns version 3."""
        st = self.state
        index = self.s.check_index()
        shown = []
        for via in self.s.readers:
            ctx = self.s.read_context(AGENT, Read(st.repo, QUESTION), via)
            shown.append(sop_first(self.s, st, ctx, st.v3, via))
            st.contexts[via] = ctx
        return f"{index}; " + "; ".join(shown)

    def as_of_old(self) -> str:
        """Read as of step 3's instant: the first baseline, version 1."""
        st = self.state
        expect(st.read_at, "step 3 recorded no instant")
        then = self.s.published(PUBLISHER, st.repo, st.read_at).get("baseline_id")
        expect(then == st.first_baseline, f"as of {st.read_at} published was {then}")
        shown = []
        for via in self.s.readers:
            ctx = self.s.read_context(AGENT, Read(st.repo, QUESTION, as_of=st.read_at), via)
            shown.append(sop_first(self.s, st, ctx, st.v1, via))
        return f"as of {st.read_at}: " + "; ".join(shown)

    # -- 7. negative checks -----------------------------------------------------------------
    def no_grant_read(self) -> str:
        """Without a grant, the repository and the SOP answer like missing ones."""
        st = self.state
        for via in self.s.readers:
            read = partial(self.s.read_context, OUTSIDER, via=via)
            real = refused(partial(read, Read(st.repo, QUESTION)), f"an ungranted read via {via}")
            missing = refused(
                partial(read, Read(st.missing_repo, QUESTION)), f"a missing repository via {via}"
            )
            same_answer(real, missing, (st.repo, st.missing_repo), f"read via {via}")
            body = partial(self.s.version_body, OUTSIDER, version_id=st.v3, via=via)
            real = refused(partial(body, st.sop), f"an ungranted element read via {via}")
            missing = refused(partial(body, INVENTED_ELEMENT), f"a missing element via {via}")
            same_answer(real, missing, (st.sop, INVENTED_ELEMENT), f"element read via {via}")
        return f"NOT_FOUND like a missing repository and element via {'/'.join(self.s.readers)}"

    def no_grant_propose(self) -> str:
        """Without a grant, proposing answers like proposing into a missing repository."""
        st = self.state
        for via in self.s.proposers:

            def attempt(repo: str, via: str = via) -> dict[str, Any]:
                return self.s.propose(OUTSIDER, repo, st.sop, st.v3, SOP_V1, "smoke", via)

            real = refused(lambda: attempt(st.repo), f"an ungranted proposal via {via}")
            missing = refused(lambda: attempt(st.missing_repo), f"a proposal via {via}")
            same_answer(real, missing, (st.repo, st.missing_repo), f"propose via {via}")
        return f"NOT_FOUND like a missing repository via {'/'.join(self.s.proposers)}"

    def on_behalf_refused(self) -> str:
        """A second agent naming the first on behalf, without a delegation, is refused —
        it cannot read (or, so, revise or withdraw) the first agent's proposal."""
        st = self.state
        err = refused(
            lambda: self.s.proposal_show(EDITOR, st.proposal, on_behalf_of=AGENT),
            f"{EDITOR} reading {AGENT}'s proposal on its behalf",
        )
        expect(
            err.code == "PERMISSION_DENIED" and "delegation" in str(err),
            f"{EDITOR} naming {AGENT} without a delegation got {err}",
        )
        return f"{EDITOR} naming {AGENT}: PERMISSION_DENIED (no delegation grant)"

    def verify_citations_rejects(self) -> str:
        """A returned citation verifies; one to v1 (not returned) and an invented one do not."""
        st = self.state
        for via in self.s.readers:
            ctx = st.contexts.get(via)
            expect(ctx, f"no published read via {via} to check citations against")
            assert ctx is not None
            genuine = ctx["items"][0]["citations"][0]
            other = {**genuine, "version_id": st.v1}
            invented = {**genuine, "element_id": INVENTED_ELEMENT, "version_id": INVENTED_VERSION}
            verdict = self.s.verify_citations(
                AGENT, ctx["context_id"], [genuine, other, invented], via
            )
            got = [(r["valid"], r["reason"]) for r in verdict["results"]]
            expect(got[0][0], f"via {via} a citation the context returned is rejected: {got[0]}")
            expect(
                got[1] == (False, "other_version_of_element"),
                f"via {via} a citation of {st.v1} (not in the context) is {got[1]}",
            )
            expect(
                got[2] == (False, "not_in_context"),
                f"via {via} an invented citation is {got[2]}",
            )
            expect(not verdict["all_valid"], f"via {via} all_valid is true")
        return f"other version and invented citation rejected via {'/'.join(self.s.readers)}"

    # -- 8. a registered source syncs, and the page citing what changed is drifted -----------
    def sync_and_drift(self) -> str:
        """The SOP cites an evidence file; the backlog, registered as a source, gets a commit
        changing that file; the source's run brings it in and the SOP is listed as drifted."""
        st = self.state
        if self.backlog is None or not st.evidence:
            raise StepSkipped("no evidence was ingested on this surface: nothing to sync")
        done = self.s.sync_and_drift(st.repo, self.backlog, st.sop)
        if done is None:
            raise StepSkipped("sources are registered on the server's home: not over --target")
        return done
