"""The NumPy MiniLM encoder reproduces sentence-transformers' vectors for all-MiniLM-L6-v2
(reference vectors computed once with sentence-transformers and PyTorch, kept as a fixture)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.semantic_extra import require_semantic

REFERENCE = Path(__file__).resolve().parents[2] / "fixtures" / "minilm_reference.json"


@pytest.fixture(scope="module")
def encoder():  # type: ignore[no-untyped-def]
    require_semantic()
    from projection.semantic.encoder import MiniLMEncoder

    return MiniLMEncoder()


def test_vectors_match_sentence_transformers(encoder) -> None:  # type: ignore[no-untyped-def]
    import numpy as np

    ref = json.loads(REFERENCE.read_text("utf-8"))
    ours = encoder.encode(ref["texts"])
    expected = np.asarray(ref["vectors"], dtype=np.float32)
    assert ours.shape == expected.shape == (len(ref["texts"]), 384)
    assert float(np.abs(ours - expected).max()) < 1e-3  # the tanh GELU: ~2e-4
    cosines = (ours * expected).sum(axis=1)
    assert float(cosines.min()) > 0.9999


def test_vectors_are_unit_length_and_order_independent(encoder) -> None:  # type: ignore[no-untyped-def]
    import numpy as np

    texts = ["short", "a somewhat longer sentence about deployments", "", "x " * 400]
    together = encoder.encode(texts)
    alone = np.vstack([encoder.encode([t]) for t in texts])
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert float(np.abs(together - alone).max()) < 1e-5  # padding never leaks into a vector
    assert encoder.encode([]).shape == (0, 384)


def test_meaning_beats_shared_words_across_vocabulary(encoder) -> None:  # type: ignore[no-untyped-def]
    query, paraphrase, same_words = encoder.encode(
        [
            "how do I fix my automobile",
            "Repairing a car engine step by step.",
            "How do I bake a chocolate cake?",
        ]
    )
    assert float(query @ paraphrase) > float(query @ same_words)


_THREADS_PROBE = """
import json, sys
from threadpoolctl import threadpool_info, threadpool_limits
import numpy  # noqa: F401
threadpool_limits(limits=2, user_api="blas")  # as a 2+-core machine starts, whatever this one has
from runtime import serving_process
serving_process()
print(json.dumps([lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]))
"""


@pytest.mark.parametrize("user_setting", [None, "2"])
def test_a_serving_process_computes_blas_on_one_thread_unless_the_user_said(
    user_setting: str | None,
) -> None:
    """`ameide serve` (and each worker) caps NumPy's BLAS at one thread: a query's products are
    too small to split and idle OpenBLAS threads spin, so concurrent requests contended for the
    cores. A user's own OPENBLAS_NUM_THREADS is left as it is."""
    require_semantic()
    import os
    import subprocess
    import sys

    from projection.semantic.encoder import THREAD_VARIABLES

    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    if user_setting is not None:
        env["OPENBLAS_NUM_THREADS"] = user_setting
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, "-c", _THREADS_PROBE], env=env, cwd=root, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    counts = json.loads(done.stdout)
    assert counts, "NumPy's BLAS library was not found"
    assert set(counts) == ({1} if user_setting is None else {2})
