"""What installing the SDK costs an author: `pip install ./sdk` in a fresh venv, as
docs/bots.md writes it, against the compiling install it replaced, and `bidel compile`.

    python3.11 bench/sdk_install.py [--runs 3]

Prints, in seconds of wall time (and of CPU, the children's), each run of:
- `pip install ./sdk` with nothing set: the default, pure build (aim: under 20 s);
- `BIDEL_ENGINE_BUILD=auto pip install ./sdk`: the install that compiles on the way, which
  was the default before (one run: it is the peer the default is compared with);
- `bidel compile` in the pure venv: the documented step to the compiled build, first with an
  empty cache (it fetches the pinned mypyc once) and then `--again` with the cache warm;
and which build `bidel --version` reports after each. Each install builds from a fresh copy of
sdk/, as a fresh clone has it (pip builds in the source folder, and setuptools would reuse the
objects an earlier build left there). Run it on an idle machine; it uses the network as pip
does (the package index for setuptools and mypy).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Run ``argv``; (wall seconds, CPU seconds of the children) — or exit saying why."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed:\n{done.stdout}{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _version(venv: Path) -> str:
    said = subprocess.run(
        [str(venv / "bin" / "bidel"), "--version"], capture_output=True, text=True
    )
    return said.stdout.strip().split(": ", 1)[-1][:-1]  # (the build, without the line's ")")


def _fresh_source(scratch: Path, name: str) -> Path:
    """sdk/ as a fresh clone has it: its linked packages copied, and nothing an earlier
    build left (pip builds in the source folder, and setuptools reuses the objects it finds)."""
    source = scratch / f"{name}-source"
    leftovers = shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__", "*.so", "_compiled.json", ".*"
    )
    shutil.copytree(ROOT / "sdk", source, symlinks=False, ignore=leftovers)
    return source


def _install(scratch: Path, name: str, build: str | None) -> tuple[Path, float, float]:
    venv = scratch / name
    source = _fresh_source(scratch, name)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k != "BIDEL_ENGINE_BUILD"}
    if build is not None:
        env["BIDEL_ENGINE_BUILD"] = build
    argv = [str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check"]
    wall, cpu = _timed([*argv, str(source)], env, ROOT)
    return venv, wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="default installs timed (3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bidel-sdk-install-") as folder:
        scratch = Path(folder)
        print("pip install ./sdk (the default: pure)")
        walls = []
        venv = scratch
        for run in range(args.runs):
            venv, wall, cpu = _install(scratch, f"pure{run}", None)
            walls.append(wall)
            print(f"  run {run + 1}: {wall:5.1f} s wall, {cpu:5.1f} s CPU  -> {_version(venv)}")
        print(f"  median {statistics.median(walls):.1f} s (aim: under 20 s)")

        print("BIDEL_ENGINE_BUILD=auto pip install ./sdk (compiling on the way: the peer)")
        compiled, wall, cpu = _install(scratch, "auto", "auto")
        print(f"  run 1: {wall:5.1f} s wall, {cpu:5.1f} s CPU  -> {_version(compiled)}")

        print("bidel compile, in the last pure venv")
        env = {**os.environ, "XDG_CACHE_HOME": str(scratch / "cache")}
        bidel = str(venv / "bin" / "bidel")
        wall, cpu = _timed([bidel, "compile"], env, scratch)
        print(f"  cache empty: {wall:5.1f} s wall, {cpu:5.1f} s CPU  -> {_version(venv)}")
        wall, cpu = _timed([bidel, "compile", "--again"], env, scratch)
        print(f"  cache warm:  {wall:5.1f} s wall, {cpu:5.1f} s CPU  -> {_version(venv)}")


if __name__ == "__main__":
    main()
