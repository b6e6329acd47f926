"""The embedding model's files are checked against their pinned SHA-256 before anything is
loaded: real tampered copies (not mocks) are refused, and the verification cache never lets a
rewritten file through."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from projection.semantic import encoder
from tests.semantic_extra import require_semantic


@pytest.fixture
def installed() -> Path:
    require_semantic()
    path = encoder.model_dir()
    assert path is not None
    return path


def _copy(installed: Path, into: Path, *, real: tuple[str, ...]) -> Path:
    """The model's three files in ``into``: ``real`` ones copied byte for byte, the others
    symbolic links to the installed files (the 91 MB of weights are copied only when needed)."""
    into.mkdir()
    for name in encoder.WEIGHTS_SHA256:
        if name in real:
            shutil.copyfile(installed / name, into / name)
        else:
            (into / name).symlink_to(installed / name)
    return into


def _flip_one_byte(file: Path, offset: int) -> None:
    with file.open("r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 0x01]))


def test_the_installed_files_are_the_pinned_ones(installed: Path) -> None:
    for name, expected in encoder.WEIGHTS_SHA256.items():
        assert hashlib.sha256((installed / name).read_bytes()).hexdigest() == expected, name
    assert encoder.WEIGHTS_SHA256["model.safetensors"].startswith("53aa5117")
    assert encoder.WEIGHTS_SHA256["tokenizer.json"].startswith("be50c362")


def test_weights_with_one_byte_changed_are_refused(installed: Path, tmp_path: Path) -> None:
    copy = _copy(installed, tmp_path / "model", real=("model.safetensors",))
    assert encoder.MiniLMEncoder(path=copy).name == encoder.MODEL_NAME  # the pristine copy loads
    weights = copy / "model.safetensors"
    _flip_one_byte(weights, weights.stat().st_size // 2)  # inside a weight tensor, not the header
    with pytest.raises(encoder.WeightsRefused) as refused:
        encoder.MiniLMEncoder(path=copy)
    message = str(refused.value)
    assert str(weights) in message
    assert encoder.WEIGHTS_SHA256["model.safetensors"] in message
    assert hashlib.sha256(weights.read_bytes()).hexdigest() in message
    assert refused.value.code == "FAILED_PRECONDITION"  # surfaces as one clear error line


def test_a_changed_tokenizer_is_refused(installed: Path, tmp_path: Path) -> None:
    copy = _copy(installed, tmp_path / "model", real=("tokenizer.json",))
    tokenizer = copy / "tokenizer.json"
    tokenizer.write_text(tokenizer.read_text("utf-8") + "\n", encoding="utf-8")
    with pytest.raises(encoder.WeightsRefused, match=r"tokenizer\.json"):
        encoder.MiniLMEncoder(path=copy)


def test_the_verification_cache_never_passes_a_rewritten_file(
    installed: Path, tmp_path: Path
) -> None:
    copy = _copy(installed, tmp_path / "model", real=("tokenizer.json",))
    verified = tmp_path / "vectors" / encoder.VERIFIED_FILE
    verified.parent.mkdir()
    encoder.MiniLMEncoder(path=copy, verified=verified)
    assert verified.is_file()
    assert verified.stat().st_mode & 0o777 == 0o600
    remembered = verified.read_text("utf-8")
    assert str((copy / "tokenizer.json").resolve()) in remembered
    encoder.MiniLMEncoder(path=copy, verified=verified)  # loads again from the cache

    # the same size and mtime after a rewrite: the ctime (which cannot be set back) differs
    tokenizer = copy / "tokenizer.json"
    before = tokenizer.stat()
    text = tokenizer.read_text("utf-8")
    tokenizer.write_text(text.replace('"[UNK]"', '"[UNX]"', 1), encoding="utf-8")
    os.utime(tokenizer, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (tokenizer.stat().st_size, tokenizer.stat().st_mtime_ns) == (
        before.st_size,
        before.st_mtime_ns,
    )
    with pytest.raises(encoder.WeightsRefused, match=r"tokenizer\.json"):
        encoder.MiniLMEncoder(path=copy, verified=verified)


def test_a_cache_that_cannot_be_read_only_means_hashing_again(
    installed: Path, tmp_path: Path
) -> None:
    copy = _copy(installed, tmp_path / "model", real=())
    verified = tmp_path / encoder.VERIFIED_FILE
    verified.write_text("not json", encoding="utf-8")
    encoder.MiniLMEncoder(path=copy, verified=verified)
    assert "model.safetensors" in verified.read_text("utf-8")  # replaced by a good one


def test_verified_weights_are_mapped_and_encode_as_the_weights_read_whole(
    installed: Path, tmp_path: Path
) -> None:
    """Weights that passed the check before are used through a memory map (a CLI read does
    not read and copy 91 MB first); the vectors are the ones of the weights read and hashed."""
    import numpy

    verified = tmp_path / encoder.VERIFIED_FILE
    read_whole = encoder.MiniLMEncoder(path=installed, verified=verified)
    assert not isinstance(read_whole._w["pooler.dense.weight"], numpy.memmap)
    mapped = encoder.MiniLMEncoder(path=installed, verified=verified)
    assert isinstance(mapped._w["pooler.dense.weight"], numpy.memmap)
    texts = ["how does a curator accept a proposal", "rollback a baseline"]
    assert abs(read_whole.encode(texts) - mapped.encode(texts)).max() < 1e-6


def test_weights_rewritten_after_the_check_are_hashed_again_and_refused(
    installed: Path, tmp_path: Path
) -> None:
    copy = _copy(installed, tmp_path / "model", real=("model.safetensors",))
    verified = tmp_path / encoder.VERIFIED_FILE
    encoder.MiniLMEncoder(path=copy, verified=verified)
    weights = copy / "model.safetensors"
    before = weights.stat()
    _flip_one_byte(weights, before.st_size - 1)
    os.utime(weights, ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.raises(encoder.WeightsRefused, match=r"model\.safetensors"):
        encoder.MiniLMEncoder(path=copy, verified=verified)
