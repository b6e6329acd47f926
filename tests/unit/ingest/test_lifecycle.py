"""Lifecycle statements near the top of a document, in the conventions real backlogs use."""

from __future__ import annotations

import pytest

from ingest.lifecycle import CONVENTIONS, derive, references, state_of
from ingest.links.references import resolve_reference


@pytest.mark.parametrize(
    ("front", "body", "state"),
    [
        ({"status": "historical"}, "# T\n", "superseded"),
        ({"status": "Accepted"}, "# T\n", "current"),
        ({"status": "proposal"}, "# T\n", "draft"),
        ({}, "# T\n\n**Status:** Deprecated (historical; superseded by 650 suite)\n", "superseded"),
        ({}, "# T\n\n**Status**: Implemented\n", "current"),
        ({}, "# T\n\n> Status: Draft\n", "draft"),
        (
            {},
            "# T\n\n> **Status – superseded (2026-02-17):** registries were removed.\n",
            "superseded",
        ),
        ({}, "# T\n\nStatus-quo: it works.\n", None),
        ({}, "# ADR 3\n\n## Status\n\nSuperseded by [ADR-0005](0005-x.md)\n", "superseded"),
        ({}, "# T\n\n> **DEPRECATED**: This backlog has been superseded by 430v2.\n", "superseded"),
        ({}, "# T\n\n> **⚠️ SUPERSEDED BY [435](435-remote.md)**\n", "superseded"),
        ({}, "# T\n\n> Deprecated (historical): this doc assumes a dev model.\n", "superseded"),
        ({}, "# T\n\nSuperseded by: backlog/650-new.md\n", "superseded"),
        ({}, "# Observability Blueprint – Single-Tenant Stack (superseded)\n", "superseded"),
        ({}, "# Backlog 344: Package Pipeline Refresh _(Archived)_\n\nText.\n", "superseded"),
        ({}, "# [DEPRECATED] Old flow\n", "superseded"),
        ({}, "# Foo (Draft)\n", "draft"),
        ({}, "# Foo (Draft)\n\n**Status:** Accepted\n", "current"),  # a status line wins
        ({}, "# Foo (v2)\n", None),
        ({}, "# Migrating from Foo (deprecated) to Bar\n", None),  # a mark ends the title
        ({}, "# Guide\n\nText.\n\n## Old parts (deprecated)\n", None),  # only the title
        ({}, "# T\n\nThis used to be deprecated, see below.\n", None),
        ({}, "# T\n\n> **Update:** the tilt overlays are deprecated.\n", None),
        ({}, "# T\n\n```\nStatus: Deprecated\n```\n", None),
        ({}, "# T\n" + "text\n" * 40 + "Status: Deprecated\n", None),
    ],
)
def test_the_state_comes_from_front_matter_or_the_top(front, body, state) -> None:
    assert derive(front, body).state == state


def test_the_evidence_names_the_line_that_said_so() -> None:
    found = derive({}, "# T\n\n**Status:** Deprecated (superseded by 520)\n")
    assert found.evidence == "**Status:** Deprecated (superseded by 520)"
    assert found.metadata()["superseded"] is True
    assert found.metadata()["lifecycle"]["state"] == "superseded"


def test_supersedes_lines_name_documents_but_not_parts_of_them() -> None:
    found = derive({}, "# T\n\n**Supersedes:** 432 (Modes), parts of 367 (Bootstrap)\n")
    assert found.supersedes == ("432",)
    assert found.state is None  # saying what it replaces says nothing of its own state
    assert references("[a](a.md), backlog/b.md and 12") == ("a.md", "backlog/b.md", "12")


def test_a_title_mark_may_name_the_replacement() -> None:
    found = derive({}, "# 713 — Scenarios (superseded by 714)\n\nText.\n")
    assert (found.state, found.superseded_by) == ("superseded", ("714",))
    assert found.evidence == "# 713 — Scenarios (superseded by 714)"


def test_a_sentence_about_the_document_names_what_it_supersedes() -> None:
    one = derive({}, "# T\n\nThis document supersedes `backlog/527-x-v3.md` to make it work.\n")
    assert one.supersedes == ("backlog/527-x-v3.md",)
    two = derive(
        {}, "# T\n\nThis backlog sets the target. It consolidates and supersedes 371 and 376.\n"
    )
    assert two.supersedes == ("371", "376")
    listed = derive(
        {},
        "# T\n\nThis document is **authoritative** and supersedes:\n"
        "- [334](334-logging.md)\n- `backlog/334-logging-v2.md`\n\nNot a list: 99\n",
    )
    assert listed.supersedes == ("334-logging.md", "backlog/334-logging-v2.md")
    assert listed.state is None
    # another document's statement is not this one's
    assert derive({}, "# T\n\nThe 430v2 plan supersedes 430.\n").supersedes == ()


def test_the_vocabulary_is_configurable() -> None:
    assert state_of("Legacy (kept)") is None
    assert state_of("Legacy (kept)", {"legacy": "superseded"}) == "superseded"


def test_references_resolve_by_each_rule() -> None:
    paths = {"backlog/a/433-codex.md", "backlog/432-modes.md", "other/x.md", "z/x.md", "432.md"}
    assert resolve_reference("433-codex.md", "backlog/a/b.md", paths) == "backlog/a/433-codex.md"
    assert resolve_reference("backlog/432-modes.md", "q/r.md", paths) == "backlog/432-modes.md"
    assert resolve_reference("repo/backlog/432-modes.md", "q.md", paths) == "backlog/432-modes.md"
    assert (
        resolve_reference("../../nowhere/433-codex.md", "q.md", paths) == "backlog/a/433-codex.md"
    )
    assert resolve_reference("432", "q.md", paths) == "backlog/432-modes.md"
    assert resolve_reference("x.md", "q.md", paths) is None  # ambiguous
    assert resolve_reference("missing.md", "q.md", paths) is None


EACH_CONVENTION = {
    "title": ("# X (superseded by 714)\n", "superseded", "# X (superseded by 714)", (), ("714",)),
    "supersedes": ("# T\n\nReplaces: [a](a.md), 12\n", None, None, ("a.md", "12"), ()),
    "superseded by": ("# T\n\nReplaced by 650\n", "superseded", "Replaced by 650", (), ("650",)),
    "status line": ("# T\n\nStatus - active\n", "current", "Status - active", (), ()),
    "status heading": ("# T\n\n## Status\n\nProposed\n", "draft", "## Status Proposed", (), ()),
    "banner": ("# T\n\n**Obsolete** by [b](b.md).\n", "superseded", "**Obsolete** by [b](b.md).",
               (), ("b.md",)),
}  # fmt: skip


@pytest.mark.parametrize("name", list(EACH_CONVENTION))
def test_each_convention_states_what_it_recognises(name: str) -> None:
    body, state, evidence, supersedes, superseded_by = EACH_CONVENTION[name]
    found = derive({}, body)
    assert (found.state, found.evidence) == (state, evidence)
    assert (found.supersedes, found.superseded_by) == (supersedes, superseded_by)


def test_the_conventions_are_offered_each_line_in_a_fixed_order() -> None:
    assert [c.name for c in CONVENTIONS] == list(EACH_CONVENTION)
    undecided = [c.name for c in CONVENTIONS if c.while_undecided]
    assert undecided == ["status line", "status heading", "banner"]


def test_the_first_heading_is_the_title_before_anything_else() -> None:
    # read by a later convention, these would state a lifecycle; as the title they state nothing
    assert derive({}, "# Status: Deprecated\n").state is None
    assert derive({}, "# Superseded by 714\n").superseded_by == ()
    # the same lines after the title do
    assert derive({}, "# T\n\n## Status: Deprecated\n").state == "superseded"
    assert derive({}, "# T\n\n## Superseded by 714\n").superseded_by == ("714",)


def test_the_first_stated_state_wins_but_replacements_are_always_named() -> None:
    first = derive({}, "# T\n\n**Status:** Draft\n\n**Status:** Accepted\n")
    assert (first.state, first.evidence) == ("draft", "**Status:** Draft")
    banner = derive({}, "# T\n\nStatus: Accepted\n\n> **DEPRECATED**: superseded by 9.\n")
    assert (banner.state, banner.superseded_by) == ("current", ())
    named = derive({}, "# T\n\n**Status:** Accepted\n\nSuperseded by: 650\n")
    assert (named.state, named.superseded_by) == ("current", ("650",))
    by_front = derive({"status": "draft"}, "# T\n\nStatus: Accepted\n")
    assert (by_front.state, by_front.evidence) == ("draft", "front matter status: draft")
