"""Permission-trimming benchmark: thousands of generated reads against the trimming model.

Run: ``.venv/bin/python -m bench.bench_trimming`` (``--cases 200`` for a quick run). It builds
the corpus of ``tests.trimming_model`` (three repositories, documents of every classification,
relationships across classifications, two promotions) in a fresh SQLite home, then draws
``--cases`` reads from a seeded generator — a fresh principal per case with up to four grants,
each with its own role (``ingestor`` included) and clearance, published or head, ``as_of``,
0-2 hops, organization-wide or one repository, plus one direct ``get_element`` — and checks
each answer against the model (read clearance comes only from grants whose role allows
reading). Prints one row per selector and a total: cases, violations, seconds, cases/s; then
the first violations found, if any. Exit status 1 when any case broke the model.

The same check runs in CI as ``tests/integration/test_read_permission_trimming.py`` with a
smaller count (``AMEIDE_PROPERTY_EXAMPLES``, default 80).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from runtime import build_app
from service.settings import Settings
from tests.trimming_model import SELECTORS, build_corpus, describe, random_case, run_case

SEED = 20261124


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000, help="generated reads (10,000)")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="ameide-bench-trim-") as tmp:
        app = build_app(Settings(home=Path(tmp) / "home"), migrate=True)
        try:
            corpus = build_corpus(app)
            rows = {s: [0, 0, 0.0] for s in SELECTORS}  # cases, violations, seconds
            examples: list[tuple[dict[str, object], list[str]]] = []
            started = time.perf_counter()
            for n in range(args.cases):
                case = random_case(rng, len(corpus.docs))
                t0 = time.perf_counter()
                problems = run_case(corpus, case)
                row = rows[case.selector]
                row[0] += 1
                row[2] += time.perf_counter() - t0
                if problems:
                    row[1] += 1
                    if len(examples) < 5:
                        examples.append((describe(case), problems))
                if (n + 1) % 1000 == 0:
                    print(f"  {n + 1} cases…", file=sys.stderr, flush=True)
            total = time.perf_counter() - started
        finally:
            app.close()
    print(f"\n{'selector':<10} {'cases':>8} {'violations':>11} {'seconds':>9} {'cases/s':>9}")
    print("-" * 51)
    for selector, (cases, bad, secs) in rows.items():
        rate = cases / secs if secs else 0.0
        print(f"{selector:<10} {cases:>8,} {bad:>11,} {secs:>9.1f} {rate:>9.1f}")
    bad_total = sum(r[1] for r in rows.values())
    print("-" * 51)
    rate = args.cases / total if total else 0.0
    print(f"{'total':<10} {args.cases:>8,} {bad_total:>11,} {total:>9.1f} {rate:>9.1f}")
    for case_json, problems in examples:
        print(json.dumps({"case": case_json, "problems": problems}))
    return 1 if bad_total else 0


if __name__ == "__main__":
    raise SystemExit(main())
