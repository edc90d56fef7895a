"""Another commit's tree, ready to run beside this one (not a benchmark: the benchmarks that
take ``--baseline REV`` share it)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def export(rev: str) -> tuple[str, Path]:
    """(REV's short hash, its tree in a new temporary folder): exported with ``git archive``,
    its engine compiled when REV knows how, its bytecode written (as this tree's is:
    sandboxed bots see both read-only)."""
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", rev],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    tree = Path(tempfile.mkdtemp(prefix="bidel-baseline-"))
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", commit],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    if (tree / "sdk" / "setup.py").exists():  # a commit that compiles its engine: compile it
        subprocess.run(
            [sys.executable, "setup.py", "build_ext", "--inplace", "-q"],
            cwd=tree / "sdk",
            check=True,
            capture_output=True,
        )
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "engine", "bots_sdk"], cwd=tree, check=True
    )
    return commit, tree
