"""`manage.py demo` (what `make demo` runs): web + worker up and healthy, demo bots laddered and
ranked, Ctrl-C stops all."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

from tests.arena.live import wait_until
from tests.support import PROJECT_DIR, SERVICE_VARIABLES, child_env

_TOURNAMENT_DUE_NOW = (
    "from django.utils import timezone\n"
    "from arena.tournaments import tournament_create\n"
    "t = tournament_create(name='Demo cup', format='round_robin', hands_per_table=1,\n"
    "                      bots=['random', 'low', 'heuristic', 'montecarlo'],\n"
    "                      starts_at=timezone.now())\n"
    "print(t.pk)\n"
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _processes_with(marker: str) -> list[int]:
    """Pids of live processes whose environment contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in environ.split(b"\0") and state != "Z":
            found.append(int(entry.name))
    return found


def test_demo_comes_up_healthy_and_ctrl_c_leaves_nothing_behind(tmp_path: Path) -> None:
    port = _free_port()
    overrides: dict[str, str | None] = {name: None for name in SERVICE_VARIABLES}
    overrides |= {"BIDEL_VAR_DIR": str(tmp_path), "PYTHONUNBUFFERED": "1", "DEBUG": "1"}
    env = child_env(overrides)
    marker = f"BIDEL_VAR_DIR={tmp_path}"
    demo = subprocess.Popen(
        [sys.executable, "manage.py", "demo", f"--port={port}", "--concurrency=2", "--matches=2"],
        cwd=PROJECT_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    output: list[str] = []
    try:
        assert demo.stdout is not None
        for line in demo.stdout:
            output.append(line)
            if "Bidel is up" in line:
                break
        else:
            raise AssertionError("demo exited before it was up:\n" + "".join(output))
        threading.Thread(target=lambda: output.extend(demo.stdout), daemon=True).start()
        printed = "".join(output)
        # Seeded demo users' bots played the ladder; the rankings and the URLs were shown.
        assert "Demo users ada and grace uploaded the bots ducker and dumper" in printed
        assert "rank  bot" in printed and "ducker" in printed and "heuristic" in printed
        assert f"http://127.0.0.1:{port}/api/ladders/1/rankings/" in printed

        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health/", timeout=30) as response:
            assert response.status == 200
            health = json.load(response)
        assert health["status"] == "ok"
        assert health["database"] == health["database"] | {"ok": True, "vendor": "sqlite"}
        assert health["broker"]["ok"] and health["broker"]["transport"] == "filesystem"
        assert health["workers"]["ok"] and health["workers"]["count"] >= 2
        assert health["runners"]["count"] == 1 and health["sandbox"]["ok"]
        assert "Healthy " in printed and "beat (ladders, tournaments) are running" in printed
        # web (uvicorn parent + workers), worker and runner (celery + pool), beat, the demo
        assert len(_processes_with(marker)) >= 6

        # Beat runs: a tournament due now starts and finishes by itself.
        created = subprocess.run(
            [sys.executable, "manage.py", "shell", "-c", _TOURNAMENT_DUE_NOW],
            cwd=PROJECT_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert created.returncode == 0, created.stderr
        tournament = int(created.stdout.split()[-1])
        url = f"http://127.0.0.1:{port}/api/tournaments/{tournament}/"

        def finished() -> bool:
            with urllib.request.urlopen(url, timeout=30) as response:
                return json.load(response)["status"] == "finished"

        wait_until(finished, 180, "the scheduled tournament to start and finish by itself")

        demo.send_signal(signal.SIGINT)  # what Ctrl-C in the terminal delivers
        assert demo.wait(timeout=60) == 0, "".join(output)
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
    assert _processes_with(marker) == [], "stray processes after Ctrl-C:\n" + "".join(output)
    assert (tmp_path / "bidel.sqlite3").exists()  # it migrated its own database


def test_demo_with_its_port_taken_says_so_in_one_line_and_exits_non_zero(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = child_env(
            {name: None for name in SERVICE_VARIABLES}
            | {"BIDEL_VAR_DIR": str(tmp_path), "PORT": str(port)}
        )
        done = subprocess.run(
            [sys.executable, "manage.py", "demo"],
            cwd=PROJECT_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode != 0
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert f"port {port} on 127.0.0.1 is taken" in lines[0] and "PORT=" in lines[0]
    assert "Bidel is up" not in done.stdout
    assert not (tmp_path / "bidel.sqlite3").exists()  # nothing was started or written
