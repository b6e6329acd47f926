"""Routing semantics: the match DSL, first-match order, overrides, templates, explain."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.document import Skip, explain_file
from ingest.routing.conditions import evaluate
from ingest.routing.model import Classification, GroupCondition, Policy, RoutingConfig
from ingest.routing.rules import RepositoryKey, RoutableFile, RouteError, Router

HOME = RepositoryKey("acme", "eng", "backlog")


def router(*rules: dict[str, Any], defaults: dict[str, Any] | None = None) -> Router:
    config = RoutingConfig.model_validate({"rules": list(rules), "defaults": defaults or {}})
    return Router(config, HOME)


def holds(condition: dict[str, Any], front_matter: dict[str, Any] | None = None, **kw: Any) -> bool:
    group = GroupCondition.model_validate({"all": [condition]})
    file = RoutableFile(kw.pop("path", "backlog/a.md"), front_matter or {}, kw)
    return evaluate(group, file)[0]


# --- the match DSL ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("condition", "front_matter", "expected"),
    [
        ({"field": "front_matter.status", "equals": "done"}, {"status": "done"}, True),
        ({"field": "front_matter.status", "equals": "done"}, {}, False),
        ({"field": "front_matter.status", "in": ["a", "b"]}, {"status": "b"}, True),
        ({"field": "front_matter.tags", "in": ["x", "y"]}, {"tags": ["q", "y"]}, True),
        ({"field": "front_matter.tags", "contains": "sec"}, {"tags": ["sec"]}, True),
        ({"field": "front_matter.tags", "contains": "sec"}, {"tags": "sec"}, False),
        ({"field": "front_matter.owner", "present": True}, {"owner": "a"}, True),
        ({"field": "front_matter.owner", "present": True}, {"owner": None}, False),
        ({"field": "front_matter.owner", "absent": True}, {}, True),
        ({"field": "front_matter.owner", "present": False}, {}, True),
        ({"field": "front_matter.a.b", "equals": 1}, {"a": {"b": 1}}, True),
        ({"field": "front_matter.a.b", "equals": 1}, {"a": 1}, False),
        ({"field": "front_matter.flag", "equals": 1}, {"flag": True}, False),
        ({"field": "front_matter.since", "gte": "2024-01-01"}, {"since": "2024-06-01"}, True),
        ({"field": "front_matter.n", "gt": 3}, {"n": "10"}, False),
        ({"field": "front_matter.n", "lte": 3}, {"n": 3}, True),
    ],
)
def test_field_tests_follow_the_documented_semantics(condition, front_matter, expected):
    assert holds(condition, front_matter) is expected


def test_glob_tests_the_path_and_signals_compare_numerically():
    assert holds({"field": "path", "glob": "backlog/**/*.md"}, path="backlog/x/y.md")
    assert not holds({"field": "path", "glob": "docs/**"}, path="backlog/x.md")
    assert holds({"field": "signals.word_count", "gt": 10}, word_count=11)
    assert not holds({"field": "signals.word_count", "lt": 10}, word_count=10)


def test_empty_groups_follow_logic():
    file = RoutableFile("a.md")
    assert evaluate(GroupCondition(all=[]), file)[0]
    assert not evaluate(GroupCondition(any=[]), file)[0]
    assert evaluate(GroupCondition(none=[]), file)[0]


def test_several_keys_in_one_group_must_all_hold():
    group = GroupCondition.model_validate(
        {
            "any": [{"field": "path", "glob": "*.md"}],
            "none": [{"field": "front_matter.draft", "equals": True}],
        }
    )
    assert evaluate(group, RoutableFile("a.md"))[0]
    assert not evaluate(group, RoutableFile("a.md", {"draft": True}))[0]


# --- decisions --------------------------------------------------------------------------------


def test_an_unmatched_file_goes_to_the_command_repository_with_defaults():
    decision = router(defaults={"tags": ["backlog"]}).route(RoutableFile("a.md"))
    assert decision.repository == HOME
    assert (decision.classification, decision.policy) == (Classification.INTERNAL, Policy.PROTECT)
    assert decision.tags == ("backlog",)
    assert decision.rule is None


def test_the_highest_priority_matching_rule_wins_and_ties_keep_file_order():
    r = router(
        {"name": "low", "actions": {"classification": "public"}},
        {"name": "high", "priority": 5, "actions": {"classification": "restricted"}},
        {"name": "high-later", "priority": 5, "actions": {"classification": "confidential"}},
    )
    decision = r.route(RoutableFile("a.md"))
    assert decision.rule == "'high' (#2)"
    assert decision.classification is Classification.RESTRICTED


def test_an_override_wins_over_a_higher_priority_rule_and_tags_add_up():
    r = router(
        {"name": "place", "priority": 99, "actions": {"repository": "x", "tags": ["a"]}},
        {
            "name": "pii",
            "override": True,
            "match": {"all": [{"field": "signals.pii_detected", "equals": True}]},
            "actions": {"policy": "redact", "classification": "restricted", "tags": ["pii"]},
        },
        defaults={"tags": ["d"]},
    )
    decision = r.route(RoutableFile("a.md", {}, {"pii_detected": True}))
    assert decision.policy is Policy.REDACT
    assert decision.classification is Classification.RESTRICTED
    assert decision.repository == RepositoryKey("acme", "eng", "x")  # not set by the override
    assert decision.tags == ("d", "a", "pii")
    assert decision.override_rule == "'pii' (#2)"


def test_templates_fill_fields_and_resolve_against_the_command_repository():
    r = router(
        {"name": "t", "actions": {"repository": "{front_matter.org}/team-{front_matter.owner}"}}
    )
    decision = r.route(RoutableFile("a.md", {"owner": "pay", "org": "fin"}))
    assert decision.repository == RepositoryKey("acme", "fin", "team-pay")


@pytest.mark.parametrize(
    ("front_matter", "message"),
    [
        ({}, "missing"),
        ({"owner": None}, "missing"),
        ({"owner": ["a", "b"]}, "not a text value"),
        ({"owner": "../../x"}, "contains '/'"),
        ({"owner": "has space"}, "not a valid repository name"),
    ],
)
def test_a_template_that_cannot_be_filled_is_an_error_for_that_file(front_matter, message):
    r = router({"name": "t", "actions": {"repository": "team-{front_matter.owner}"}})
    with pytest.raises(RouteError, match=message):
        r.route(RoutableFile("a.md", front_matter))


def test_routing_cannot_leave_the_tenant():
    r = router({"name": "t", "actions": {"repository": "other/eng/x"}})
    with pytest.raises(RouteError, match="another tenant"):
        r.route(RoutableFile("a.md"))


def test_literal_braces_are_escaped_by_doubling():
    r = router({"name": "t", "actions": {"repository": "x{{y}}"}})
    with pytest.raises(RouteError, match="not a valid repository name"):
        r.route(RoutableFile("a.md"))  # "x{y}" is rendered, then refused as a name


def test_explain_says_which_rule_matched_and_why():
    r = router(
        {"name": "drafts", "match": {"all": [{"field": "front_matter.status", "equals": "draft"}]}},
        {"name": "big", "match": {"any": [{"field": "signals.word_count", "gte": 100}]}},
    )
    explanation = r.explain(RoutableFile("a.md", {"status": "final"}, {"word_count": 250}))
    assert explanation.decision is not None
    assert explanation.decision.rule == "'big' (#2)"
    drafts, big = explanation.traces
    assert not drafts.matched
    assert "  front_matter.status ('final') equals 'draft' → false" in drafts.reasons
    assert big.matched
    assert "  signals.word_count (250) gte 100 → true" in big.reasons
    assert explanation.summary.startswith("rule 'big' (#2) → acme/eng/backlog")


def test_explain_reports_a_routing_error_instead_of_raising():
    r = router({"name": "t", "actions": {"repository": "team-{front_matter.owner}"}})
    explanation = r.explain(RoutableFile("a.md"))
    assert explanation.decision is None
    assert "front_matter.owner" in (explanation.error or "")
    assert explanation.summary.startswith("routing failed")


# --- properties -------------------------------------------------------------------------------

_rules = st.lists(
    st.tuples(st.integers(-3, 3), st.booleans(), st.booleans()),  # priority, override, matches
    min_size=1,
    max_size=8,
)


def _rule_set(specs: list[tuple[int, bool, bool]]) -> tuple[Router, RoutableFile]:
    rules = [
        {
            "name": f"r{i}",
            "priority": priority,
            "override": override,
            "match": {"all": [{"field": f"front_matter.hit{i}", "equals": True}]},
            "actions": {"tags": [f"t{i}"], "policy": "reject" if override else "store"},
        }
        for i, (priority, override, _) in enumerate(specs)
    ]
    front_matter = {f"hit{i}": matches for i, (_, _, matches) in enumerate(specs)}
    return router(*rules), RoutableFile("a.md", front_matter)


def _first(specs: list[tuple[int, bool, bool]], override: bool) -> str | None:
    candidates = [(-p, i) for i, (p, o, m) in enumerate(specs) if m and o is override]
    return f"'r{min(candidates)[1]}' (#{min(candidates)[1] + 1})" if candidates else None


@given(_rules)
def test_the_first_matching_rule_in_priority_order_decides(specs):
    r, file = _rule_set(specs)
    assert r.route(file).rule == _first(specs, override=False)


@given(_rules)
def test_a_matching_override_always_wins(specs):
    r, file = _rule_set(specs)
    decision = r.route(file)
    assert decision.override_rule == _first(specs, override=True)
    if decision.override_rule is not None:
        assert decision.policy is Policy.REJECT


_scalars = st.one_of(st.booleans(), st.integers(-3, 3), st.sampled_from(["a", "b", "c"]))


@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.booleans()), max_size=6), _scalars)
def test_none_all_and_any_match_their_python_meaning(tests, value):
    conditions = [{"field": "front_matter.v", "equals": want} for want, _ in tests]
    file = RoutableFile("a.md", {"v": value})
    results = [value == want and not isinstance(value, bool) for want, _ in tests]
    for key, meaning in (("all", all), ("any", any), ("none", lambda r: not any(r))):
        group = GroupCondition.model_validate({key: conditions})
        assert evaluate(group, file)[0] is meaning(results)


@given(st.lists(_scalars, max_size=6), _scalars)
def test_contains_is_list_membership_keeping_booleans_apart(items, needle):
    expected = any(type(i) is type(needle) and i == needle for i in items)
    assert holds({"field": "front_matter.l", "contains": needle}, {"l": items}) is expected


_segment = st.from_regex(r"[a-z0-9][a-z0-9_-]{0,10}", fullmatch=True)


@given(_segment, _segment)
def test_a_filled_template_is_exactly_the_substitution(owner, suffix):
    r = router({"name": "t", "actions": {"repository": f"team-{{front_matter.owner}}-{suffix}"}})
    decision = r.route(RoutableFile("a.md", {"owner": owner}))
    assert decision.repository.repository == f"team-{owner}-{suffix}"


@given(st.dictionaries(st.sampled_from(["team", "org", "x"]), _segment))
def test_a_template_never_renders_a_literal_placeholder(front_matter):
    r = router({"name": "t", "actions": {"repository": "team-{front_matter.owner}"}})
    with pytest.raises(RouteError):
        r.route(RoutableFile("a.md", front_matter))


def test_a_file_can_be_explained_from_its_bytes():
    r = router(
        {"name": "pii", "match": {"all": [{"field": "signals.pii_detected", "equals": True}]}}
    )
    explanation = explain_file("a.md", b"---\nowner: x\n---\nmail a@b.io\n", r)
    assert not isinstance(explanation, Skip)
    assert explanation.decision is not None
    assert explanation.decision.rule == "'pii' (#1)"
    assert isinstance(explain_file("b.md", b"\x00", r), Skip)
