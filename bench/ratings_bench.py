"""The ladder's rating fit at scale (pure: no database), against the fit it replaced.

    .venv/bin/python bench/ratings_bench.py [--baseline adef535] [--quick]

For each field (entries, rated tables of four, drawn from a Plackett–Luce model with a few
ties), prints the seconds of (each with the ratings and their intervals read off the fit):

- a full fit from zero (``fit`` of the whole history), and the same warm-started from the
  last fit's strengths after 100 more results (what a refit costs as the ladder plays);
- folding those 100 results into the kept fit (``Fit.fold``: the history not read again),
  and how far its ratings and interval ends are from the full refit's (Elo points);
- the baseline's ``fit_ratings`` (REV's ``arena/ratings.py`` or ``arena/domain/ratings.py``)
  on the same tables, where it ends in reasonable time (its dense inverse and per-entry
  contrasts are cubic in the entries: it is skipped, saying so, beyond 1,000 entries).
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.domain.ratings import History, Table, fit  # noqa: E402

FIELDS = [
    (200, 10_000),
    (200, 100_000),
    (200, 1_000_000),
    (1_000, 20_000),
    (3_000, 20_000),
    (5_000, 100_000),
]
QUICK = [(200, 10_000), (200, 100_000), (1_000, 20_000)]
SEATS = 4
BASELINE_MOST_ENTRIES = 1_000


def draw(entries: int, tables: int, seed: int) -> History:
    """Tables of four drawn from Plackett–Luce (Gumbel's trick) with true strengths ~ N(0, 1);
    about one table in twenty has two seats tie."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0.0, 1.0, entries)
    players = (
        np.argsort(rng.random((tables, entries)), axis=1)[:, :SEATS]
        if entries <= 64
        else (_seat(rng, entries, tables))
    )
    noisy = strength[players] + rng.gumbel(size=players.shape)
    places = np.argsort(np.argsort(-noisy, axis=1), axis=1)
    tie = rng.random(tables) < 0.05
    places[tie] = np.minimum(places[tie], 2)  # the last two tie for third
    names = tuple(f"e{i:05d}" for i in range(entries))
    return History(names, players.astype(np.int64), places.astype(np.int64))


def _seat(rng: np.random.Generator, entries: int, tables: int) -> np.ndarray:
    players = rng.integers(0, entries, size=(tables, SEATS))
    while True:  # four different entries a table
        clash = (np.sort(players, axis=1)[:, 1:] == np.sort(players, axis=1)[:, :-1]).any(axis=1)
        if not clash.any():
            return players
        players[clash] = rng.integers(0, entries, size=(int(clash.sum()), SEATS))


def tables_of(history: History) -> list[Table]:
    return [
        Table(
            tuple(history.names[i] for i in row if i >= 0),
            tuple(int(place) for i, place in zip(row, places, strict=True) if i >= 0),
        )
        for row, places in zip(history.players.tolist(), history.places.tolist(), strict=True)
    ]


def baseline_fit(rev: str):  # type: ignore[no-untyped-def]
    for path in ("arena/domain/ratings.py", "arena/ratings.py"):
        shown = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:{path}"], capture_output=True, text=True
        )
        if shown.returncode == 0:
            break
    else:
        sys.exit(f"{rev} has no ratings module")
    folder = Path(tempfile.mkdtemp(prefix="bidel-ratings-"))
    (folder / "baseline_ratings.py").write_text(shown.stdout)
    spec = importlib.util.spec_from_file_location(
        "baseline_ratings", folder / "baseline_ratings.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["baseline_ratings"] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="adef535", help="the commit whose fit to compare")
    parser.add_argument("--quick", action="store_true", help="the three smallest fields only")
    parser.add_argument(
        "--field", action="append", metavar="ENTRIESxTABLES", help="this field only (repeatable)"
    )
    args = parser.parse_args()
    fields = QUICK if args.quick else FIELDS
    if args.field:
        fields = [tuple(int(x) for x in f.split("x")) for f in args.field]  # type: ignore[misc]
    old = baseline_fit(args.baseline)
    print(f"Rating fit, seconds (tables of {SEATS}; baseline: {args.baseline}'s fit_ratings)")
    print(
        f"{'entries':>8} {'tables':>10} {'full':>7} {'warm+100':>9} {'fold+100':>9} "
        f"{'fold vs full: Elo / ends':>19} {'baseline full':>14}"
    )
    for entries, count in fields:
        history = draw(entries, count + 100, seed=entries + count)
        past = History(history.names, history.players[:count], history.places[:count])
        recent = tables_of(History(history.names, history.players[count:], history.places[count:]))
        anchors = history.names[:4]
        started = time.perf_counter()
        before = fit(past)
        before.ratings(anchors)
        full = time.perf_counter() - started
        start = dict(zip(before.names, before.theta.tolist(), strict=True))
        started = time.perf_counter()
        after = fit(history, start=start)
        exact = after.ratings(anchors)
        warm = time.perf_counter() - started
        started = time.perf_counter()
        folded = before.fold(recent)
        near = folded.ratings(anchors)
        fold = time.perf_counter() - started
        worst = max(abs(exact[n].rating - near[n].rating) for n in exact)
        ends = max(
            max(abs(exact[n].low - near[n].low), abs(exact[n].high - near[n].high)) for n in exact
        )
        if entries <= BASELINE_MOST_ENTRIES:
            tables = tables_of(past)
            started = time.perf_counter()
            old.fit_ratings(tables, anchors)
            baseline = f"{time.perf_counter() - started:13.2f}s"
        else:
            baseline = "      (skipped)"
        print(
            f"{entries:>8,} {count:>10,} {full:>6.2f}s {warm:>8.2f}s {fold:>8.3f}s "
            f"{worst:>9.2g} / {ends:<7.2g} {baseline:>14}",
            flush=True,
        )


if __name__ == "__main__":
    main()
