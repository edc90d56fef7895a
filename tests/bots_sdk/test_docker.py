"""The Docker backend: how its containers are made, and the whole sandbox suite
(tests/bots_sdk/test_sandbox.py) and the channel tests between seats
(tests/hostile/test_channels.py) run against an engine it reaches only through
``DOCKER_HOST``, from a copy of the project the engine cannot see."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bots_sdk.sandbox import Limits, SandboxUnavailable, containers, default_launcher

PROJECT = Path(__file__).resolve().parents[2]
LIMITS = Limits(cpu_seconds=2, memory_mb=256)


def test_a_bots_container_shares_nothing_and_has_every_limit() -> None:
    options = containers.container_options(LIMITS)
    assert options["network_mode"] == "none" and options["read_only"] is True
    assert options["cap_drop"] == ["ALL"] and options["user"] == "65534:65534"
    assert options["security_opt"][0] == "no-new-privileges"
    assert options["security_opt"][1].startswith('seccomp={"defaultAction"')
    assert options["mem_limit"] == options["memswap_limit"] == "256m"
    assert options["pids_limit"] == LIMITS.processes and options["nano_cpus"] == 10**9
    assert "nr_inodes=2048" in options["tmpfs"]["/tmp"]
    assert options["environment"] == {}
    assert options["labels"]["bidel.bot"] == "1"
    for shared in ("volumes", "mounts", "volumes_from", "devices", "privileged", "pid_mode"):
        assert shared not in options, shared


def test_the_bots_image_is_built_from_the_sdks_sources_alone() -> None:
    files = containers.sdk_files()
    names = {path.relative_to(PROJECT).parts[0] for path in files}
    assert names == {"engine", "bots_sdk"}
    assert len(containers.sdk_digest()) == 16
    # with the compiled engine where it is built here (its bots simulate as fast as ours)
    import engine

    compiled = {path.name for path in files if not path.name.endswith(".py")}
    if engine.BUILD.kind == "compiled":
        assert "_compiled.json" in compiled and any(n.startswith("state.") for n in compiled)


def test_unknown_backend_is_refused() -> None:
    with pytest.raises(SandboxUnavailable, match="unknown sandbox backend 'jail'"):
        default_launcher(backend="jail")


# --- the suite through DOCKER_HOST only ------------------------------------------------------


def _engine_problem() -> str:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return "needs root and unshare (a private mount namespace hides the engine's socket)"
    try:
        containers.client()
    except containers.Unavailable as exc:
        return str(exc)
    return ""


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        try:
            sink.shutdown(socket.SHUT_WR)  # (half-close, as a hijacked attach needs)
        except OSError:
            pass


@pytest.fixture
def engine_over_tcp() -> Iterator[str]:
    """``tcp://127.0.0.1:PORT`` forwarding to the local engine's socket: the engine as a
    remote one is reached."""
    local = containers.client().api.base_url  # (proves an engine answers on the socket)
    assert local.startswith("http+docker://")
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            engine = socket.socket(socket.AF_UNIX)
            engine.connect("/var/run/docker.sock")
            for a, b in ((conn, engine), (engine, conn)):
                threading.Thread(target=_pipe, args=(a, b), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    yield f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    listener.close()


# In a private mount namespace: /run (the engine's socket) is an empty tmpfs, the project is
# copied into it and temporary files go there too (TMPDIR), the bots' image is built from the
# copy, and the sandbox suite runs from it. The engine, outside, can see none of those files.
_ISOLATED = r"""
set -eu
mount -t tmpfs bidel-private /run
mkdir /run/project
tar -C "$1" --exclude=./.venv --exclude=./.git --exclude=./test-artifacts -cf - . \
    | tar -C /run/project -xf -
mkdir /run/tmp
export TMPDIR=/run/tmp
cd /run/project
test ! -e /run/docker.sock
"$2" -m bots_sdk docker-image
exec "$2" -m pytest -q -p no:cacheprovider -o addopts=-ra --log-level=WARNING \
    tests/bots_sdk/test_sandbox.py \
    tests/hostile/test_channels.py::test_no_channel_between_two_seats_carries_a_single_card
"""


@pytest.mark.docker
@pytest.mark.timeout(1800)
def test_the_sandbox_suite_passes_on_an_engine_reached_only_through_docker_host(
    engine_over_tcp: str,
) -> None:
    problem = _engine_problem()
    if problem:
        pytest.skip(f"no Docker engine to test the Docker backend on: {problem}")
    # The inner suite runs beside the other lane: it keeps to the copy's own SQLite and
    # cache, never the services of the run around it (its fixtures empty the throttle keys
    # of the cache they find, and once emptied a lock-out the other lane was counting).
    env = {
        **os.environ,
        "DOCKER_HOST": engine_over_tcp,
        "BIDEL_DOCKER_SUITE": "1",
        "BIDEL_SANDBOX": "docker",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    for shared in ("DATABASE_URL", "REDIS_URL"):
        env.pop(shared, None)
    done = subprocess.run(
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            _ISOLATED,
            "sh",
            str(PROJECT),
            sys.executable,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=1700,
    )
    out = done.stdout[-6000:] + done.stderr[-3000:]
    assert done.returncode == 0, out
    assert "built bidel-bot:latest" in done.stdout and "on http://127.0.0.1:" in done.stdout, out
    summary = done.stdout.strip().splitlines()[-1]
    assert " passed" in summary and "skipped" not in summary and "failed" not in summary, out
    # and nothing of it is left on the engine
    assert containers.client().api.containers(all=True, filters={"label": "bidel.bot"}) == []
