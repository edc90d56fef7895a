"""No channel between seats: two seats of one runner, a sender and a receiver, try every exact
channel through the kernel we know of (tests/hostile/bots/channels.py lists them) to pass the
sender's 13 cards before the first trick. In the sandbox the receiver recovers nothing (each
probe sees all 52 files marked alike, or is refused); outside it, run the same way, the same
probes read the hand exactly — so the probes work, and the sandbox is what stops them."""

from __future__ import annotations

import ctypes
import glob
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from bots_sdk.referee.runner import GameResult, TimeControl, run_match
from bots_sdk.sandbox import Limits
from engine.record import verify
from tests.sandboxes import backend_problem, backends_under_test, left_behind

BOT = str(Path(__file__).parent / "bots" / "channels.py")
EVERY = list(range(52))
#: What the receiver probes: each must report.
CHANNELS = {
    "inotify",
    "atime",
    "cachestat",
    "mincore",
    "rwf-nowait",
    "flock",
    "posix-lock",
    "ofd-lock",
    "proc-locks",
    "abstract-socket",
    "file-/tmp",
    "file-/dev/shm",
    "sysv-msg",
}
#: What outside the sandbox carries the hand on any Linux host (atime and the page cache
#: depend on the filesystem's options and the cache's state).
ALWAYS_OPEN_OUTSIDE = CHANNELS - {"atime", "cachestat", "mincore", "rwf-nowait"}
#: The sender's calls the seccomp filter refuses, with the error each answers.
REFUSED = {
    "flock": "ENOLCK",
    "posix-lock": "ENOLCK",
    "ofd-lock": "ENOLCK",
    "lease": "EPERM",
    "dnotify": "EPERM",
    "inotify_init1": "ENOSYS",
}
# A roomy clock: the probes are a few hundred system calls, on a loaded host too.
CLOCK = TimeControl(move=5, bank=10)


def _play(seed: int, **how: object) -> GameResult:
    result = run_match(
        "standard",
        seed,
        [BOT, BOT, "low", "random"],
        hands=1,
        time_control=CLOCK,
        limits=Limits(cpu_seconds=30, memory_mb=256),
        **how,  # type: ignore[arg-type]
    )
    game = result.games[0]
    assert verify(game.record)["valid"]
    for seat in (0, 1):
        assert game.seats[seat].faults == [], game.seats[seat].stderr[-3000:]
    return game


def _lines(game: GameResult, seat: int, word: str) -> list[str]:
    """What follows ``word`` on each line of a seat's stderr that starts with it."""
    return [
        line[len(word) + 1 :]
        for line in game.seats[seat].stderr.splitlines()
        if line.startswith(word + " ")
    ]


def _hand(game: GameResult) -> list[int]:
    (found,) = _lines(game, 0, "HAND")
    return list(json.loads(found))


def _seen(game: GameResult) -> dict[str, list[int]]:
    pairs = (line.split(" ", 1) for line in _lines(game, 1, "CHANNEL"))
    seen = {name: json.loads(indices) for name, indices in pairs}
    assert set(seen) == CHANNELS, game.seats[1].stderr[-3000:]  # every probe ran
    return seen


def _calls(game: GameResult, seat: int) -> dict[str, set[str]]:
    calls: dict[str, set[str]] = {}
    for name, result in (line.split(" ", 1) for line in _lines(game, seat, "CALL")):
        calls.setdefault(name, set()).add(result)
    return calls


@pytest.fixture
def clean_marks() -> Iterator[None]:
    """What a sender outside the sandbox leaves on the host: removed before and after."""

    def clean() -> None:
        for path in glob.glob("/tmp/bidel-channel-*") + glob.glob("/dev/shm/bidel-channel-*"):
            os.unlink(path)
        libc = ctypes.CDLL(None, use_errno=True)
        for index in range(52):
            queue = libc.msgget(0x0B1DE000 + index, 0)
            if queue >= 0:
                libc.msgctl(queue, 0, None)  # IPC_RMID

    clean()
    yield
    clean()


@pytest.mark.parametrize("backend", backends_under_test())
@pytest.mark.parametrize("seed", [5, 11])
def test_no_channel_between_two_seats_carries_a_single_card(
    backend: str, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    problem = backend_problem(backend)
    if problem:
        pytest.skip(f"no {backend} sandbox here: {problem}")
    monkeypatch.setenv("BIDEL_SANDBOX", backend)
    game = _play(seed)
    assert len(_hand(game)) == 13
    (files,) = _lines(game, 1, "FILES")
    assert files == "52"
    for channel, seen in _seen(game).items():
        # nothing marked, or everything alike: 0 bits of the sender's hand
        assert seen in ([], EVERY), f"{channel} carried {seen} (the hand: {_hand(game)})"
    calls = _calls(game, 0)
    for call, error in REFUSED.items():
        assert calls[call] == {error}, (call, calls[call])
    assert left_behind(backend) == []


def test_outside_the_sandbox_the_same_probes_read_the_hand_exactly(clean_marks: None) -> None:
    game = _play(5, unsafe=True)
    hand = _hand(game)
    seen = _seen(game)
    for channel in sorted(ALWAYS_OPEN_OUTSIDE):
        assert seen[channel] == hand, (channel, seen[channel], hand)
