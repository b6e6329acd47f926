"""Abbreviations a text defines, and the words they add to a question (projection.abbreviations)."""

from __future__ import annotations

import pytest

from projection.abbreviations import MAX_ADDITIONS, Definition, additions, definitions

PAGE = """# Platform notes
We follow Event-Driven Architecture (EDA) across services. KEDA (Kubernetes Event-Driven
Autoscaling) scales the jobs. The Azure Front Door (AFD) sits in front of the clusters, and
Architecture Decision Records (ADRs) live in the repository.
"""


def _found(text: str) -> dict[str, str]:
    return {d.short: d.long for d in definitions(text)}


def test_definitions_before_and_inside_the_parentheses_are_found() -> None:
    assert _found(PAGE) == {
        "eda": "event driven architecture",
        "afd": "azure front door",
        "adr": "architecture decision records",
        "keda": "kubernetes event driven autoscaling",
    }


@pytest.mark.parametrize(
    "text",
    [
        "The API (v2) is stable.",  # not a short form: one capital
        "Read the guide (see below).",
        "The user identifier (ID) is opaque.",  # initials u, i do not spell "id"
        "Single sign-on (SSO) for the console.",  # s, s, o: "on" is a small word, left out
        "KEDA (scales jobs on queue length) is installed.",  # the words inside do not spell it
        "A (B) and x (Y).",
    ],
)
def test_parentheses_that_define_nothing_are_ignored(text: str) -> None:
    assert definitions(text) == []


def test_the_first_definition_of_a_short_form_wins() -> None:
    text = "Enterprise Architect (EA) reviews. Enterprise Architecture (EA) is the practice."
    assert _found(text) == {"ea": "enterprise architect"}


def test_a_question_spelling_out_a_defined_abbreviation_also_searches_for_it() -> None:
    known = definitions(PAGE)
    added = additions("which event-driven architecture principles apply now?", known)
    assert [(d.short, words) for d, words in added] == [("eda", "eda")]
    assert additions("Which Azure Front Door settings does the edge use?", known)[0][1] == "afd"


def test_a_question_holding_the_short_form_or_part_of_the_long_one_is_left() -> None:
    known = definitions(PAGE)
    assert additions("what is the EDA event-driven architecture of billing?", known) == []
    assert additions("how do I install KEDA?", known) == []  # its words are common ones
    assert additions("which architecture decisions are recorded?", known) == []
    assert additions("the event driven parts", known) == []


def test_at_most_a_few_abbreviations_widen_one_question() -> None:
    known = [Definition(f"a{n}", ("alpha", f"w{n}")) for n in range(10)]
    question = " ".join(f"alpha w{n}" for n in range(10))
    assert len(additions(question, known)) == MAX_ADDITIONS
