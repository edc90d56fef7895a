"""Hostile bots in the sandbox: each is contained, the match completes, the fault (if any) is
classified, and nothing the bot started survives the match."""

from __future__ import annotations

from pathlib import Path

import pytest

from bots_sdk.referee.runner import GameResult, TimeControl, run_match
from bots_sdk.sandbox import Limits
from engine.record import verify
from tests.sandboxes import UNHURRIED, backend_problem, backends_under_test, left_behind

HOSTILE = Path(__file__).parent / "hostile"
BACKENDS = backends_under_test()


# Every hostile bot against each local backend: bubblewrap and the namespaces directly; or,
# inside test_docker.py's run (BIDEL_DOCKER_SUITE=1), the Docker backend through DOCKER_HOST.
@pytest.fixture(params=BACKENDS, autouse=True)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    problem = backend_problem(request.param)
    if problem:
        pytest.skip(f"no {request.param} sandbox here: {problem}")
    monkeypatch.setenv("BIDEL_SANDBOX", request.param)
    return str(request.param)


#: For the bots whose fault is time: a short clock, which a loop or a sleep without end is past
#: on any machine. Every other bot has the clock no busy host runs out of (UNHURRIED).
FAST_CLOCK = TimeControl(move=0.05, bank=0.1)
LIMITS = Limits(cpu_seconds=2, memory_mb=256)


def _match(
    backend: str,
    bot: str,
    *,
    hands: int = 1,
    others: tuple[str, ...] = ("low", "random", "heuristic"),
    clock: TimeControl = UNHURRIED,
) -> GameResult:
    result = run_match(
        "standard",
        7,
        [str(HOSTILE / f"{bot}.py"), *others],
        hands=hands,
        time_control=clock,
        limits=LIMITS,
    )
    game = result.games[0]
    assert verify(game.record)["valid"], "the match must complete with a valid record"
    assert game.state.history and len([h for h in game.state.history if not h.void]) == hands
    assert left_behind(backend) == [], "a process or container of the bot survived the match"
    return game


def _classes(game: GameResult) -> list[str]:
    return [fault["class"] for fault in game.seats[0].faults]


@pytest.mark.parametrize(
    ("bot", "expected", "clock"),
    [
        pytest.param("infinite_loop", "timeout", FAST_CLOCK, id="infinite_loop-timeout"),
        pytest.param("sleeper", "timeout", FAST_CLOCK, id="sleeper-timeout"),
        pytest.param("memory_bomb", "memory", UNHURRIED, id="memory_bomb-memory"),
        pytest.param("crash", "crash", UNHURRIED, id="crash-crash"),
        pytest.param("illegal", "illegal", UNHURRIED, id="illegal-illegal"),
        pytest.param("stdout_flood", "protocol", UNHURRIED, id="stdout_flood-protocol"),
        pytest.param("close_stdout", "crash", UNHURRIED, id="close_stdout-crash"),
        pytest.param("wrong_seat", "protocol", UNHURRIED, id="wrong_seat-protocol"),
        pytest.param("eager", "protocol", UNHURRIED, id="eager-protocol"),
    ],
)
def test_hostile_bot_is_classified_and_replaced(
    backend: str, bot: str, expected: str, clock: TimeControl
) -> None:
    game = _match(backend, bot, clock=clock)
    assert _classes(game)[0] == expected, game.seats[0].faults
    assert game.seats[0].replaced  # the fallback played on


def test_cpu_burning_thread_is_stopped_by_its_cpu_limit(backend: str) -> None:
    game = _match(
        backend,
        "thread_burn",
        hands=12,
        others=("low", "random", "montecarlo"),
        clock=TimeControl(1, 5),
    )
    assert "timeout" in _classes(game), game.seats[0].faults
    # (a container burns only on its turn, with one CPU: its wall time is its clock)
    assert "CPU" in game.seats[0].faults[0]["detail"] or backend == "docker"


def test_fork_bomb_hits_the_process_limit_and_leaves_nothing(backend: str) -> None:
    game = _match(backend, "fork_bomb")
    assert "FORK_REFUSED after" in game.seats[0].stderr
    refused_after = int(game.seats[0].stderr.split("FORK_REFUSED after ")[1].split(":")[0])
    assert refused_after < LIMITS.processes


def test_no_network_no_secrets_no_other_files(
    backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SECRET_KEY", "the-workers-secret")
    game = _match(backend, "snoop")  # (no fault expected)
    report = game.seats[0].stderr
    assert "redis: DENIED" in report  # 127.0.0.1:6379 is unreachable
    assert "interfaces: OPEN \"['lo']\"" in report  # loopback only
    assert "routes: OPEN '[]'" in report  # and no route anywhere (nothing was sent)
    assert "shadow: DENIED" in report
    assert "SECRET_KEY=False" in report and "the-workers-secret" not in report
    assert "list /work: DENIED" in report
    assert "write-outside: DENIED" in report
    if backend == "docker":  # the image's own /etc and /home; nothing of the referee's host
        assert "DOCKER" not in report and "/run/docker.sock" not in report
    else:
        assert "passwd: DENIED" in report and "pid1-environ: DENIED" in report
        assert "list /home: DENIED" in report
    assert not game.seats[0].faults


def test_huge_file_is_capped(backend: str) -> None:
    game = _match(backend, "huge_file")
    assert "WRITE_STOPPED after 8 MiB" in game.seats[0].stderr


def test_stderr_flood_is_capped(backend: str) -> None:
    game = _match(backend, "stderr_flood")
    assert len(game.seats[0].stderr) < LIMITS.stderr_bytes + 200
    assert "more bytes of stderr dropped" in game.seats[0].stderr


def test_bot_cannot_kill_its_parent(backend: str) -> None:
    game = _match(backend, "kill_parent")
    if backend == "docker":
        # its parent is the container's init, pid 1 of the container's PID namespace: the
        # kernel drops a SIGKILL sent to it from inside (kill() returns 0), and the bot plays on
        assert game.seats[0].stderr.strip() == "KILLED 1" and not game.seats[0].faults
    else:
        assert "REFUSED" in game.seats[0].stderr and "KILLED" not in game.seats[0].stderr


def test_daemon_does_not_outlive_the_match(backend: str) -> None:
    _match(backend, "daemon")  # _match checks no process of the bot's uid is left


def test_reading_another_bots_file(tmp_path: Path) -> None:
    other = tmp_path / "rival.py"
    other.write_text((HOSTILE / "crash.py").read_text() + "\nSECRET_STRATEGY = 42\n")
    spy = tmp_path / "spy.py"
    spy.write_text(
        "import sys\nfrom bots_sdk import Bot, lowest\n\n\nclass Spy(Bot):\n"
        "    def pass_cards(self, view):\n"
        "        try:\n"
        f"            print('READ', open({str(other)!r}).read(), file=sys.stderr)\n"
        "        except OSError as exc:\n"
        "            print('DENIED', type(exc).__name__, file=sys.stderr)\n"
        "        return view.hand[:3]\n\n"
        "    def play(self, view):\n        return lowest(view.legal)\n"
    )
    result = run_match(
        "standard",
        3,
        [str(spy), str(other), "low", "low"],
        hands=1,
        time_control=UNHURRIED,
        limits=LIMITS,
    )
    report = result.games[0].seats[0].stderr
    assert "DENIED FileNotFoundError" in report and "SECRET_STRATEGY" not in report


def test_the_first_decision_is_charged_like_the_others(backend: str, tmp_path: Path) -> None:
    # The clock starts after `ready`: the interpreter's start-up and the bot's import are not
    # charged to its first decision. The bot's import spends IMPORT seconds of its own CPU
    # (so of wall time too, however busy the machine): charged, they would be the first
    # decision's at least; the decisions themselves take milliseconds.
    from bots_sdk.referee.players import Answer, ProcessPlayer
    from bots_sdk.sandbox import cgroups, default_launcher
    from bots_sdk.view import View
    from engine.rules import RuleSet
    from engine.state import GameState, Phase

    if backend != "docker" and not cgroups.support().ok:
        pytest.skip("without cgroups the clock counts kernel ticks (10 ms): too coarse here")
    bot = tmp_path / "trivial.py"
    imported = 1.0  # (of the 2 s of CPU its limits allow)
    bot.write_text(
        "import time\n"
        "from bots_sdk import Bot, lowest\n\n"
        f"while time.process_time() < {imported}:  # a costly import\n    pass\n\n\n"
        "class Trivial(Bot):\n"
        "    def pass_cards(self, view):\n        return view.hand[-3:]\n\n"
        "    def play(self, view):\n        return lowest(view.legal)\n"
    )
    rules = RuleSet.from_preset("standard")
    player = ProcessPlayer(bot, default_launcher(limits=LIMITS))
    assert player.start(0, rules.to_spec(), 1) is None
    state, charged = GameState(rules, seed=1), []
    try:
        while state.phase in (Phase.PASS, Phase.PLAY) and len(charged) < 14:
            seat, kind = state.current, "pass" if state.phase is Phase.PASS else "play"
            view = View.from_observation(state.observation(seat))
            if seat == 0:
                answer = player.decide(kind, view, 10.0)  # (the charge is measured, not the limit)
                assert isinstance(answer, Answer), answer
                charged.append(answer.cpu if answer.cpu is not None else answer.seconds)
                action = answer.action
            else:
                action = view.hand[:3] if kind == "pass" else view.legal[0]
            for card in action if isinstance(action, list) else [action]:
                state.apply(card)
    finally:
        player.close()
    # (The docker backend charges wall time, its container thawed for the turn: on a loaded
    # host tens of ms of jitter, and the first turn's the most; never the import's seconds.)
    assert len(charged) == 14 and charged[0] < imported / 2, [round(c * 1000, 2) for c in charged]


NUMPY_BOT = """
import os

import numpy

from bots_sdk import Bot


class Numeric(Bot):
    def play(self, view):
        matrix = numpy.random.default_rng(1).normal(size=(120, 120)) + 120 * numpy.eye(120)
        product = numpy.linalg.inv(matrix) @ matrix  # BLAS at work
        assert numpy.allclose(product, numpy.eye(120)), "numpy computed wrongly"
        threads = len(os.listdir("/proc/self/task"))
        assert threads == 1, f"{threads} threads: the runtime's numpy should run on one"
        return view.legal[int(numpy.argmin([len(c) for c in view.legal]))]

    def pass_cards(self, view):
        return list(view.hand[: view.rules.pass_count])
"""


def test_a_bot_may_import_the_runtimes_numpy_and_it_runs_on_one_thread(
    backend: str, tmp_path: Path
) -> None:
    bot = tmp_path / "numeric.py"
    bot.write_text(NUMPY_BOT)
    result = run_match(
        "standard",
        3,
        [str(bot), "low", "random", "low"],
        hands=1,
        time_control=UNHURRIED,
        limits=LIMITS,
    )
    game = result.games[0]
    assert game.seats[0].faults == [], game.seats[0].faults
    assert left_behind(backend) == []


def _frozen(container_id: str) -> bool | None:
    """Whether the kernel holds the container's processes frozen (its freezer cgroup, v1 or
    v2), whatever the engine records; None where this host cannot see it."""
    from bots_sdk.sandbox import containers

    pid = containers.client().api.inspect_container(container_id)["State"]["Pid"]
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return None  # (an engine on another host)
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "freezer":
            state = Path(f"/sys/fs/cgroup/freezer{path}/freezer.state")
            return state.read_text().strip() != "THAWED" if state.exists() else None
        if controllers == "":
            events = Path(f"/sys/fs/cgroup{path}/cgroup.events")
            if events.exists():
                return "frozen 1" in events.read_text().splitlines()
    return None


# Only where the Docker backend is under test (defined there alone: a suite that must skip
# nothing, such as the red team's in the runner's image, never meets it).
if "docker" in BACKENDS:

    def test_every_resume_leaves_a_container_running_however_fast_turns_follow(
        backend: str,
    ) -> None:
        # The engine records a pause from an event after its call has answered: an unpause sent
        # just after a pause was refused ("is not paused") and left the bot frozen until its clock
        # ran out (about one resume in 5,000, with six containers turning at once). Several
        # containers turn as fast as the referee can ask, and none may stay frozen.
        import threading

        from bots_sdk.sandbox import containers

        taken = [containers.pool().take(LIMITS)[0] for _ in range(4)]
        if _frozen(taken[0]) is None:
            for container_id in taken:
                containers._remove(container_id)
            pytest.skip("this host cannot see the engine's cgroups")
        stuck: list[tuple[str, int]] = []

        def turn(container_id: str) -> None:
            turns = containers.Turns(container_id)
            for cycle in range(400):
                turns.suspend()
                turns.resume()
                if _frozen(container_id):
                    stuck.append((container_id[:12], cycle))
            turns.close()

        workers = [threading.Thread(target=turn, args=(container_id,)) for container_id in taken]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        for container_id in taken:
            containers._remove(container_id)
        assert stuck == [], f"frozen after a resume: {stuck}"
