"""The Docker backend: the same launcher interface for production hosts."""

from __future__ import annotations

from pathlib import Path

import pytest

from bots_sdk.runner import run_match
from bots_sdk.sandbox import Limits, SandboxUnavailable, default_launcher

HOSTILE = Path(__file__).parent / "hostile"
LIMITS = Limits(cpu_seconds=2, memory_mb=256)


def test_docker_backend_flags() -> None:
    from bots_sdk.sandbox import Docker

    argv, env = Docker(limits=LIMITS).command(HOSTILE / "crash.py", 2)
    joined = " ".join(argv)
    flags = (
        "--network none", "--read-only", "--cap-drop ALL", "--security-opt no-new-privileges",
        "--pids-limit 16", "--memory 256m", "--user 65534", "--label bidel.bot=1", ":ro",
    )  # fmt: skip
    for flag in flags:
        assert flag in joined, flag
    assert "SECRET_KEY" not in env


def test_docker_backend_runs_a_match_where_an_engine_answers() -> None:
    from bots_sdk.sandbox import Docker

    try:
        Docker.check()
    except SandboxUnavailable as exc:
        pytest.skip(f"the Docker backend cannot run here: {exc}")
    game = run_match("standard", 1, [str(HOSTILE / "snoop.py"), "low", "low", "low"], hands=1,
                     sandbox="docker").games[0]  # fmt: skip
    assert "redis: DENIED" in game.seats[0].stderr
    assert Docker.janitor() == 0


def test_unknown_backend_is_refused() -> None:
    with pytest.raises(SandboxUnavailable, match="unknown sandbox backend 'jail'"):
        default_launcher(backend="jail")
