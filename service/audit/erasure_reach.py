"""How far an erasure reaches beyond the erased version and its byte-identical copies.

A proposal pinned to a version carries that version's text in its body — usually the whole of
it plus an edit — and every rebase of it carries the text on. Its diff and merge preview are
computed from those bodies, and its summary may quote them. So an erasure also reaches
(issue #16, item 3):

- every **derived proposal**: each proposal pinned to an erased version, each proposal whose body
  element holds one, and every proposal rebased from one of those, transitively;
- their **body versions that quote the erased text** (any of its lines of 12 or more characters,
  or the whole text): erased (title, body and metadata become tombstones), so every diff and
  merge preview built from them shows the erased marker, never the text — a proposal that
  replaced the text entirely keeps its own words;
- the **summary** of every derived proposal whose body was erased, or that quotes the text;
- their **status**: an OPEN one whose body was erased is withdrawn (it can no longer be judged
  on its content).

- **later versions of the same element that quote the text** (an accepted edit that kept the
  erased lines): erased too, or the erasure would be undone by the very next version.

Each of these only when the caller could erase or read it itself (:class:`Within`): a version
above its clearance is not erased, a proposal it may not read is neither redacted nor counted.

It does not reach other repositories, free text outside versions (rationales, relationship
metadata), or the git source (see ``docs/erasure.md``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from domain.model import ERASED_TITLE, Element, ElementVersion, Proposal, ProposalStatus
from service.authz import Caller, Permission
from service.ports import Store

if TYPE_CHECKING:
    from service.core import UnitOfWork
    from service.gate import Gate


class Within:
    """What the erasing caller could erase or read itself in the erased version's repository
    (memoized for one unit of work): an erasure touches and counts nothing else."""

    def __init__(self, gate: Gate, uow: UnitOfWork, caller: Caller, perm: Permission) -> None:
        self._gate, self._uow, self._caller, self._perm = gate, uow, caller, perm
        self._elements: dict[str, Element | None] = {}

    def _element(self, element_id: str) -> Element | None:
        if element_id not in self._elements:
            self._elements[element_id] = self._uow.store.get_element(element_id)
        return self._elements[element_id]

    def _sees(self, element_id: str | None) -> bool:
        if element_id is None:
            return True
        el = self._element(element_id)
        return el is not None and self._gate.sees(self._uow, self._caller, self._perm, el)

    def erasable(self, v: ElementVersion) -> bool:
        """Whether the caller could erase ``v`` directly (``Gate.may_erase``)."""
        el = self._element(v.element_id)
        return el is not None and self._gate.may_erase(self._uow, self._caller, self._perm, el, v)

    def proposal(self, p: Proposal) -> bool:
        """Whether the caller reads the proposal: its element and its target's."""
        return self._sees(p.element_id) and self._sees(p.target_element_id)

    def context(self, context_id: str) -> bool:
        """Whether the caller may inspect the stored read context itself."""
        row = self._uow.store.get_read_context(context_id)
        return row is not None and self._gate.may_inspect_context(self._uow, self._caller, row)


@dataclass
class Reach:
    """What an erasure reached beyond the erased version's identical copies."""

    proposals: list[Proposal] = field(default_factory=list)
    versions: list[ElementVersion] = field(default_factory=list)
    withdrawn: list[str] = field(default_factory=list)


def derived_proposals(
    proposals: Iterable[Proposal], erased: Sequence[ElementVersion]
) -> list[Proposal]:
    """The proposals an erasure reaches (see the module docstring), oldest first."""
    every = {p.proposal_id: p for p in proposals}
    erased_ids = {v.version_id for v in erased}
    erased_elements = {v.element_id for v in erased}
    reached = {
        p.proposal_id
        for p in every.values()
        if p.target_version_id in erased_ids or p.element_id in erased_elements
    }
    frontier = sorted(reached)
    while frontier:  # rebases carry the text on
        p = every[frontier.pop()]
        follow = [p.rebased_to] + [
            q.proposal_id for q in every.values() if q.rebased_from == p.proposal_id
        ]
        for nxt in follow:
            if nxt and nxt in every and nxt not in reached:
                reached.add(nxt)
                frontier.append(nxt)
    return sorted((every[i] for i in reached), key=lambda p: (p.created_at, p.proposal_id))


MIN_QUOTED_LINE = 12
"""A line of the erased text this long or longer found in another text counts as a quote."""


def quotes(text: str, erased_text: str) -> bool:
    """Whether ``text`` carries some of ``erased_text`` (see :data:`MIN_QUOTED_LINE`)."""
    whole = erased_text.strip()
    if whole and whole in text:
        return True
    lines = (line.strip() for line in erased_text.splitlines())
    return any(len(line) >= MIN_QUOTED_LINE and line in text for line in lines)


def reach(
    store: Store,
    repo_key: str,
    erased: Sequence[ElementVersion],
    erased_text: str,
    at: datetime,
    by: str,
    reason: str,
    within: Within,
) -> Reach:
    """Erase what derives from ``erased`` (whose text was ``erased_text``) in ``repo_key``,
    writing through ``store`` — only what the caller could erase or read itself (``within``)."""
    out = Reach()
    done = {v.version_id for v in erased}
    first_seq: dict[str, int] = {}
    for v in erased:
        first_seq[v.element_id] = min(v.seq, first_seq.get(v.element_id, v.seq))
    for element_id, seq in sorted(first_seq.items()):
        for v in store.list_versions(element_id):
            later = v.seq > seq and v.version_id not in done and not v.erased
            if (
                later
                and within.erasable(v)
                and (quotes(v.body, erased_text) or quotes(v.title, erased_text))
            ):
                tomb = v.erase(at, by, reason)
                store.save_erasure(tomb)
                out.versions.append(tomb)
                done.add(v.version_id)
    for p in derived_proposals(store.list_proposals(repo_key), erased):
        if not within.proposal(p):
            continue
        touched = False
        for v in store.list_versions(p.element_id):
            if v.version_id in done or v.erased or not within.erasable(v):
                continue
            if not (quotes(v.body, erased_text) or quotes(v.title, erased_text)):
                continue
            tomb = v.erase(at, by, reason)
            store.save_erasure(tomb)
            out.versions.append(tomb)
            done.add(v.version_id)
            touched = True
        if not touched and not quotes(p.summary, erased_text):
            continue
        was = p.status
        p.summary = ERASED_TITLE
        if touched and was is ProposalStatus.OPEN:
            p.close(ProposalStatus.WITHDRAWN, at, by)
            out.withdrawn.append(p.proposal_id)
        store.save_proposal(p, was)
        out.proposals.append(p)
    return out
