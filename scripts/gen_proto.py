"""Regenerate the committed gRPC code in ``ameide_proto/v1`` from ``proto/ameide_proto/v1``.

    python scripts/gen_proto.py            # rewrite the generated modules in place
    python scripts/gen_proto.py --check    # exit 1 if regenerating would change anything
    python scripts/gen_proto.py --out DIR  # generate under DIR instead (DIR/ameide_proto/v1/…)

The generated modules are committed (so an installed wheel needs no protoc) and never edited by
hand. ``proto/`` mirrors the Python import path of the generated package, so protoc's own imports
(``from ameide_proto.v1 import common_pb2``) work without rewriting. ``grpcio-tools`` is pinned
together with ``grpcio``; the same version always produces the same bytes, which is what the
freshness check (``--check``, and ``tests/integration/test_grpc_generated_code.py``) relies on.
"""

from __future__ import annotations

import argparse
import filecmp
import sys
import tempfile
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PACKAGE = Path("ameide_proto") / "v1"
GENERATED_SUFFIXES = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py")


def proto_files(proto_root: Path = PROTO_ROOT) -> list[str]:
    """The .proto files as protoc sees them (paths relative to ``proto_root``), sorted."""
    return sorted(
        p.relative_to(proto_root).as_posix() for p in (proto_root / PACKAGE).glob("*.proto")
    )


def generate(out_dir: Path, proto_root: Path = PROTO_ROOT) -> list[Path]:
    """Run protoc (python, grpc and pyi outputs) into ``out_dir``; return the files written."""
    from grpc_tools import protoc  # a dev dependency: only this script needs it

    out_dir.mkdir(parents=True, exist_ok=True)
    well_known = resources.files("grpc_tools") / "_proto"  # google/protobuf/*.proto
    args = [
        "grpc_tools.protoc",
        f"-I{proto_root}",
        f"-I{well_known}",
        f"--python_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        f"--pyi_out={out_dir}",
        *proto_files(proto_root),
    ]
    if protoc.main(args) != 0:
        raise SystemExit(f"protoc failed for {proto_root}")
    return generated_files(out_dir)


def generated_files(root: Path) -> list[Path]:
    """The generated modules under ``root/ameide_proto/v1`` (``__init__.py`` is not one)."""
    folder = root / PACKAGE
    return sorted(p for p in folder.glob("*") if p.name.endswith(GENERATED_SUFFIXES))


def stale_files(committed_root: Path = ROOT, proto_root: Path = PROTO_ROOT) -> list[str]:
    """What regeneration would change under ``committed_root``: one line per changed, missing
    or leftover generated file (empty when the committed code is fresh)."""
    with tempfile.TemporaryDirectory(prefix="ameide-proto-") as tmp:
        fresh = {p.name: p for p in generate(Path(tmp), proto_root)}
        committed = {p.name: p for p in generated_files(committed_root)}
        problems = [f"missing: {PACKAGE / name}" for name in sorted(fresh.keys() - committed)]
        problems += [f"leftover: {PACKAGE / name}" for name in sorted(committed.keys() - fresh)]
        problems += [
            f"changed: {PACKAGE / name}"
            for name in sorted(fresh.keys() & committed.keys())
            if not filecmp.cmp(fresh[name], committed[name], shallow=False)
        ]
    return problems


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the code is not fresh")
    parser.add_argument("--out", type=Path, default=ROOT, help="output root (default: the repo)")
    args = parser.parse_args(argv)
    if args.check:
        problems = stale_files(args.out)
        for line in problems:
            print(line, file=sys.stderr)
        if problems:
            print("generated gRPC code is stale: run python scripts/gen_proto.py", file=sys.stderr)
            return 1
        print("generated gRPC code is fresh")
        return 0
    for path in generate(args.out):
        print(path.relative_to(args.out) if path.is_relative_to(args.out) else path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
