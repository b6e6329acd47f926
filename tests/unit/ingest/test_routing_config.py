"""Loading routing.yaml: validation on load, errors naming the rule and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.routing.model import Classification, Policy
from ingest.routing.rules import (
    RepositoryKey,
    RoutableFile,
    Router,
    RoutingConfigError,
    load_config,
)

HOME = RepositoryKey("acme", "eng", "backlog")
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "routing.yaml"


def errors_of(text: str) -> list[str]:
    with pytest.raises(RoutingConfigError) as caught:
        load_config(text)
    return caught.value.errors


def test_an_empty_file_is_a_valid_rule_set_with_defaults():
    config = load_config("")
    assert config.rules == []
    assert config.defaults.classification is Classification.INTERNAL
    assert (
        config.defaults.policy is Policy.PROTECT
    )  # secrets, cards and IBANs are masked unless a rule says store


def test_invalid_yaml_is_reported():
    assert "not valid YAML" in errors_of("rules: [")[0]


def test_an_error_names_the_rule_by_name_and_number_and_the_field():
    text = """
rules:
  - name: ok
    actions: {policy: store}
  - name: wordy
    match: {all: [{field: signals.word_count, gte: many}]}
"""
    (error,) = errors_of(text)
    assert error.startswith("rule 2 'wordy' (rules[1]): match.all[0]: ")
    assert "signals.word_count is a number" in error


def test_an_unnamed_rule_is_named_by_its_number():
    (error,) = errors_of("rules:\n  - actions: {policy: shred}\n")
    assert error.startswith("rule 1 (rules[0]): actions.policy")


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        ("{field: front_matter.status}", "exactly one operator"),
        ("{field: front_matter.status, equals: a, in: [a]}", "exactly one operator"),
        ("{field: author, equals: x}", "unknown field 'author'"),
        ("{field: signals.mood, equals: x}", "unknown signal"),
        ("{field: path, glob: '*', extra: 1}", "extra"),
        ("{}", "needs 'field' or one of all / any / none"),
        ("{maybe: []}", "match.maybe: Extra inputs are not permitted"),
        ("{all: {field: path, glob: x}}", "valid list"),
    ],
)
def test_bad_conditions_are_refused_on_load(condition, message):
    errors = errors_of(f"rules:\n  - name: r\n    match: {condition}\n")
    assert any(message in e and e.startswith("rule 1 'r'") for e in errors), errors


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("team-{front_matter.owner", "unbalanced"),
        ("team-{owner}", "unknown field 'owner'"),
        ("  ", "must not be empty"),
    ],
)
def test_bad_repository_templates_are_refused_on_load(template, message):
    (error,) = errors_of(f"rules:\n  - name: t\n    actions: {{repository: '{template}'}}\n")
    assert error.startswith("rule 1 't' (rules[0]): actions.repository")
    assert message in error


def test_rule_names_must_be_unique():
    assert "used twice" in errors_of("rules:\n  - name: a\n  - name: a\n")[0]


def test_unknown_top_level_keys_and_versions_are_refused():
    assert errors_of("version: 2\n")
    assert errors_of("rulez: []\n")


def test_every_error_is_reported_not_only_the_first():
    errors = errors_of(
        "rules:\n  - name: a\n    priority: high\n  - name: b\n    actions: {classification: x}\n"
    )
    assert len(errors) == 2


def test_a_missing_rule_file_is_a_config_error(tmp_path):
    with pytest.raises(RoutingConfigError, match="cannot read"):
        Router.from_file(tmp_path / "nope.yaml", HOME)


def test_the_example_rule_file_loads_and_routes_as_documented():
    router = Router.from_file(EXAMPLE, HOME)
    owned = RoutableFile(
        "backlog/x.md",
        {"team": "payments"},
        {"word_count": 500, "heading_count": 3, "pii_detected": False, "pii_kinds": []},
    )
    leaky = RoutableFile(
        "backlog/y.md", {}, {"word_count": 500, "pii_detected": True, "pii_kinds": ["secret"]}
    )
    assert router.route(owned).repository == RepositoryKey("acme", "eng", "team-payments")
    assert router.route(leaky).policy is Policy.REJECT
