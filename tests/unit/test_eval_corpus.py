"""The real-corpus eval command's plumbing (dev set + pool, per-type tables, the superseded
count, unjudged listing, the skip) — none of it needs the shared corpus."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bench import eval_corpus
from bench.eval_corpus import (
    Question,
    format_tables,
    load,
    superseded_above_current,
    type_tables,
    unjudged,
)
from projection.eval_metrics import parse_dataset

DEV = [
    json.dumps(
        {
            "query": "what is the current observability contract?",
            "type": "status",
            "relevant": {"obs-v3.md": 2, "obs-v2.md": 0, "obs-v1.md": 0},
        }
    ),
    json.dumps({"query": "why pin the cli?", "type": "why", "relevant": {"pin.md": 2}}),
    json.dumps(
        {
            "query": "which cli version?",
            "type": "time_travel",
            "relevant": {"pin.md": 2},
            "as_of_ref": "abc1234",
        }
    ),
]
POOL = [json.dumps({"query": "why pin the cli?", "key": "tools.md", "grade": 1, "why": "x"})]


def _metrics(ndcg: float, mrr: float, recall: float) -> dict[str, float]:
    return {"ndcg": ndcg, "mrr": mrr, "recall": recall}


def test_the_pool_adds_grades_and_the_dev_set_keeps_its_own() -> None:
    questions, problems = load(DEV, POOL)
    assert problems == []
    why = questions[1]
    assert why.relevant == {"pin.md": 2, "tools.md": 1}
    assert why.graded == {"pin.md": 2}
    line = json.loads(questions[2].line({"abc1234": datetime(2026, 1, 3, tzinfo=UTC)}))
    assert line["as_of"] == "2026-01-03T00:00:00+00:00"
    assert "type" not in line
    assert "as_of_ref" not in line


def test_load_reports_conflicts_unknown_types_and_status_without_an_older_page() -> None:
    bad_dev = [
        json.dumps({"query": "a", "type": "gossip", "relevant": {"x.md": 2}}),
        json.dumps({"query": "b", "type": "status", "relevant": {"y.md": 2}}),
        json.dumps({"query": "c", "type": "why", "relevant": {"z.md": 3}}),
    ]
    pool = [
        json.dumps({"query": "a", "key": "x.md", "grade": 0}),
        json.dumps({"query": "nope", "key": "x.md", "grade": 0}),
    ]
    _, problems = load(bad_dev, pool)
    text = "\n".join(problems)
    assert "'gossip'" in text
    assert "names no older page" in text
    assert "grade 3" in text
    assert "conflicts with the dev set" in text
    assert "no dev-set question 'nope'" in text


def test_superseded_above_current_counts_an_older_page_before_the_current_one() -> None:
    q = load(DEV, [])[0][0]
    assert superseded_above_current(["obs-v2.md", "obs-v3.md"], q)
    assert not superseded_above_current(["other.md", "obs-v3.md", "obs-v1.md"], q)
    assert superseded_above_current(["other.md", "obs-v1.md"], q)  # current page missing
    assert not superseded_above_current(["other.md"], q)


def test_type_tables_average_per_type_and_overall() -> None:
    questions, _ = load(DEV, POOL)
    per_query: list[dict[str, Any]] = [
        {
            "kw": ["obs-v2.md", "obs-v3.md"],
            "full": ["obs-v3.md"],
            "metrics": {"kw": _metrics(0.5, 0.5, 1.0), "full": _metrics(1.0, 1.0, 1.0)},
        },
        {
            "kw": ["pin.md"],
            "full": ["new.md", "pin.md"],
            "metrics": {"kw": _metrics(1.0, 1.0, 0.5), "full": _metrics(0.6, 0.5, 0.5)},
        },
        {
            "kw": ["pin.md"],
            "full": ["pin.md"],
            "metrics": {"kw": _metrics(1.0, 1.0, 1.0), "full": _metrics(1.0, 1.0, 1.0)},
        },
    ]
    tables = type_tables(questions, per_query, ["kw", "full"])
    assert list(tables) == ["why", "status", "time_travel", "all"]
    assert tables["status"]["kw"]["superseded_above_current"] == 1
    assert tables["status"]["full"]["superseded_above_current"] == 0
    assert tables["all"]["kw"] == {
        "ndcg": 0.833,
        "mrr": 0.833,
        "recall": 0.833,
        "n": 3,
        "superseded_above_current": 1,
        "status_questions": 1,
    }
    assert "superseded_above_current" not in tables["why"]["kw"]
    text = format_tables(tables)
    assert "status (1 questions)" in text
    assert "1 of 1" in text
    assert "0 of 1" in text
    missing = unjudged(questions, per_query, ["kw", "full"])
    assert missing == [
        {
            "query": "why pin the cli?",
            "type": "why",
            "unjudged": [{"key": "new.md", "best_rank": 1, "pipelines": ["full"]}],
        }
    ]


def test_the_command_skips_with_a_message_without_the_corpus(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dev, pool = tmp_path / "dev.jsonl", tmp_path / "pool.jsonl"
    dev.write_text("\n".join(DEV) + "\n", "utf-8")
    pool.write_text("\n".join(POOL) + "\n", "utf-8")
    argv = ["--check", "--bundle", str(tmp_path / "absent.bundle")]
    code = eval_corpus.main([*argv, "--dataset", str(dev), "--pool", str(pool)])
    err = capsys.readouterr().err
    assert code == 0
    assert "valid: 3 questions" in err
    assert "skipped" in err
    pool.write_text(json.dumps({"query": "why pin the cli?", "key": "pin.md", "grade": 0}), "utf-8")
    assert eval_corpus.main([*argv, "--dataset", str(dev), "--pool", str(pool)]) == 1


def test_the_shipped_dev_set_and_pool_are_valid() -> None:
    questions, problems = load(
        eval_corpus.DEV_SET.read_text("utf-8").splitlines(),
        eval_corpus.POOL.read_text("utf-8").splitlines() if eval_corpus.POOL.exists() else [],
    )
    assert problems == []
    assert len(questions) >= 80
    assert {q.type for q in questions} == set(eval_corpus.TYPES)


def test_a_golden_line_may_read_at_a_past_instant() -> None:
    line = {"query": "q", "relevant": {"a": 1}, "as_of": "2026-01-03T10:00:00+01:00"}
    (q,) = parse_dataset([json.dumps(line)])
    assert q.as_of == datetime(2026, 1, 3, 9, 0, tzinfo=UTC)
    assert parse_dataset([json.dumps({"query": "q", "relevant": {"a": 1}})])[0].as_of is None
    for bad in ("yesterday", "2026-01-03T10:00:00", 5):
        with pytest.raises(ValueError, match="as_of"):
            parse_dataset([json.dumps({**line, "as_of": bad})])


def test_question_relevant_merges_pool_under_the_dev_set() -> None:
    q = Question("q", "why", {"a": 2}, {"a": 0, "b": 1})
    assert q.relevant == {"a": 2, "b": 1}
