"""`manage.py demo` (what `make demo` runs): web + worker up and healthy, demo bots laddered and
ranked, each process's log in var/log/ and on the screen only what a person reads, the
README's API example run as written against it, and Ctrl-C stopping all within seconds, with
no error and nothing left behind."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from arena.management.commands.demo import STOP_GRACE_SECONDS
from tests.support import DEADLINE, PROJECT_DIR, SERVICE_VARIABLES, child_env, wait_until

_TOURNAMENT_DUE_NOW = (
    "from django.utils import timezone\n"
    "from arena.services.tournaments import tournament_create\n"
    "t = tournament_create(name='Demo cup', format='round_robin', hands_per_table=1,\n"
    "                      bots=['random', 'low', 'heuristic', 'montecarlo'],\n"
    "                      starts_at=timezone.now())\n"
    "print(t.pk)\n"
)
#: The processes' log files (manage.py demo's PROCESSES), each with a line only its process
#: writes.
_LOGS = {
    "web.log": "Uvicorn running on",
    "worker.log": "demo@",
    "runner.log": "demo-runner@",
    "people-runner.log": "demo-people@",
    "beat.log": "beat: Starting",
}
#: Seconds from Ctrl-C to the demo's exit that it promises: what is left after its grace is
#: killed, and the kill and the exit take a few seconds more. (A stop took 6 s here, 7 s on a
#: loaded machine; 13 s and an error per pool process before the Celery processes were given
#: their cold shutdown all at once.) A process killed fails the test on its own: its log says so.
_STOP_SECONDS = STOP_GRACE_SECONDS + 10


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


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.load(response)


def _healthy(url: str) -> Any:
    """The health report at ``url`` when it is ok (200), else None (503: a worker's first
    heartbeat may not have come yet)."""
    try:
        return _get(f"{url}/api/health/")
    except urllib.error.HTTPError as answer:
        if answer.code != 503:
            raise
        return None


@dataclass
class Demo:
    process: subprocess.Popen[str]
    port: int
    var: Path
    env: dict[str, str]
    output: list[str] = field(default_factory=list)
    reader: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def marker(self) -> str:
        """What the environment of every process of this demo holds."""
        return f"BIDEL_VAR_DIR={self.var}"

    def printed(self) -> str:
        return "".join(self.output)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    """The demo on a fresh var/ folder, up (its rankings and URLs printed); stopped at the
    end of the module if its own test did not press Ctrl-C."""
    var = tmp_path_factory.mktemp("demo-var")
    port = _free_port()
    overrides: dict[str, str | None] = {name: None for name in SERVICE_VARIABLES}
    overrides |= {"BIDEL_VAR_DIR": str(var), "PYTHONUNBUFFERED": "1", "DEBUG": "1"}
    env = child_env(overrides)
    process = subprocess.Popen(
        [sys.executable, "manage.py", "demo", f"--port={port}", "--concurrency=2", "--matches=2"],
        cwd=PROJECT_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    running = Demo(process=process, port=port, var=var, env=env)
    try:
        assert process.stdout is not None
        for line in process.stdout:
            running.output.append(line)
            if "Bidel is up" in line:
                break
        else:
            raise AssertionError("demo exited before it was up:\n" + running.printed())
        running.reader = threading.Thread(
            target=lambda: running.output.extend(process.stdout),  # type: ignore[arg-type]
            daemon=True,
        )
        running.reader.start()
        yield running
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for pid in _processes_with(running.marker):  # only this demo's, should it have failed
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_demo_comes_up_healthy_with_its_bots_laddered_and_ranked(demo: Demo) -> None:
    printed = demo.printed()
    # Seeded demo users' bots played the ladder; the rankings and the URLs were shown.
    assert "Demo users ada and grace uploaded the bots ducker and dumper" in printed
    assert "rank  bot" in printed and "ducker" in printed and "heuristic" in printed
    assert f"{demo.url}/api/ladders/1/rankings/" in printed
    # the terminal's way in, for this demo's own address; the admin's, with how to get in
    assert f"From a terminal: bidel signup --url {demo.url}  " in printed
    assert "python manage.py createsuperuser" in printed

    health = wait_until(lambda: _healthy(demo.url), "the demo's /api/health/ to answer 200")
    parts = ("database", "broker", "workers", "runners", "sandbox")
    assert health == {"status": "ok", **{part: {"ok": True} for part in parts}}  # no details
    # The health in one line, with the details (read as staff would), and how long it took.
    line = next(line for line in printed.splitlines() if line.startswith("Health ("))
    assert line.startswith(
        f"Health ({demo.url}/api/health/): database ok (sqlite), broker ok (filesystem), "
        "workers ok ("
    ), line
    assert ", runners ok (1), sandbox ok (" in line, line
    assert "Healthy " in printed and "beat (ladders, tournaments) are running" in printed
    # web (uvicorn parent + workers), worker and runner (celery + pool), beat, the demo
    assert len(_processes_with(demo.marker)) >= 6
    assert (demo.var / "bidel.sqlite3").exists()  # it migrated its own database


def test_demo_serves_its_guides_and_its_own_error_pages_never_a_debug_page(demo: Demo) -> None:
    with urllib.request.urlopen(f"{demo.url}/docs/", timeout=30) as response:
        index = response.read().decode()
    assert "<h1>Guides</h1>" in index and 'href="/docs/protocol/"' in index
    with urllib.request.urlopen(f"{demo.url}/docs/languages/", timeout=30) as response:
        guide = response.read().decode()
    assert 'href="/docs/protocol/#conformance-bidel-check"' in guide
    with urllib.request.urlopen(f"{demo.url}/static/arena/site.css", timeout=30) as response:
        assert response.status == 200  # collected: DEBUG off serves what was collected alone
    for missing in ("/no-such-page/", "/docs/no-such-guide/", "/matches/999999/"):
        with pytest.raises(urllib.error.HTTPError) as answer:
            urllib.request.urlopen(f"{demo.url}{missing}", timeout=30)
        body = answer.value.read().decode()
        assert answer.value.code == 404, missing
        assert "There is nothing here" in body, body[:500]
        assert "URLconf" not in body and "DEBUG = True" not in body, missing


def test_demo_logs_each_process_to_a_file_and_shows_none_of_their_info(demo: Demo) -> None:
    logs = demo.var / "log"
    printed = demo.printed()
    assert f"each logs to {logs}/<name>.log." in printed  # said as they start
    assert f"their full logs are in {logs}/" in printed
    for name, own_line in _LOGS.items():
        text = (logs / name).read_text()
        assert own_line in text, (name, text[-2000:])
        assert re.search(r"\bINFO\b", text), name  # the processes' INFO lines are in the files
    # ... and not on the screen, nor the banners and warnings of their start-up.
    assert not re.search(r"\bINFO\b", printed), printed
    assert "[tasks]" not in printed and "[config]" not in printed and "Uvicorn" not in printed
    assert len(printed.splitlines()) < 30, printed


def test_beat_starts_and_finishes_a_scheduled_tournament(demo: Demo) -> None:
    created = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", _TOURNAMENT_DUE_NOW],
        cwd=PROJECT_DIR,
        env=demo.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert created.returncode == 0, created.stderr
    url = f"{demo.url}/api/tournaments/{int(created.stdout.split()[-1])}/"
    wait_until(
        lambda: _get(url)["status"] == "finished",
        "the scheduled tournament to start and finish by itself",
        deadline=3 * DEADLINE,
    )


#: Each ``curl`` of the README's example, as written, also says on stderr what it was
#: answered (its output unchanged, so the lines that read an answer read the same).
_CURL_SAYS_ITS_ANSWER = (
    "curl() { command curl --write-out '%{stderr}answered %{http_code} to %{method} "
    '%{url_effective}\\n\' "$@"; }\n'
)


def _readme_api_example() -> str:
    readme = (PROJECT_DIR / "README.md").read_text()
    section = readme.split("## The API in one minute", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, flags=re.S)[0]


def test_the_readmes_api_example_runs_as_written_where_bot_1_is_someone_elses(
    demo: Demo, tmp_path: Path
) -> None:
    assert _get(f"{demo.url}/api/bots/1/")["owner"] == "ada"  # the demo's: not the example's
    example = _readme_api_example()
    assert "localhost:8000" in example
    (tmp_path / "my_bot.py").write_bytes(
        (PROJECT_DIR / "bots_sdk" / "examples" / "ducker.py").read_bytes()
    )
    script = _CURL_SAYS_ITS_ANSWER + example.replace("localhost:8000", f"localhost:{demo.port}")
    done = subprocess.run(
        ["sh", "-eu", "-c", script],
        cwd=tmp_path,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, (done.stdout, done.stderr)
    answers = re.findall(r"answered (\d+) to (\w+) http://[^/]+(\S+)", done.stderr)
    uploaded = [path for _, _, path in answers if path.endswith("/versions/")]
    assert len(uploaded) == 1, done.stderr
    bot = int(uploaded[0].split("/")[3])  # /api/bots/{id}/versions/: the id the API answered
    assert bot != 1
    assert answers == [
        ("201", "POST", "/api/users/"),
        ("200", "POST", "/api/token/"),
        ("201", "POST", "/api/bots/"),
        ("201", "POST", f"/api/bots/{bot}/versions/"),
        ("200", "GET", "/api/ladders/1/rankings/"),
    ], done.stderr
    assert _get(f"{demo.url}/api/bots/{bot}/")["owner"] == "alan"


def test_ctrl_c_stops_everything_within_seconds_and_without_an_error(demo: Demo) -> None:
    before = len(demo.output)
    stopping = time.monotonic()
    demo.process.send_signal(signal.SIGINT)  # what Ctrl-C in the terminal delivers
    code = demo.process.wait(timeout=60)
    took = time.monotonic() - stopping
    assert demo.reader is not None
    demo.reader.join(timeout=30)
    printed = demo.printed()
    assert code == 0, printed
    assert demo.output[-1].startswith("Stopped in "), printed  # the last line says it
    assert f"The logs stay in {demo.var / 'log'}/." in demo.output[-1]
    assert _processes_with(demo.marker) == [], "stray processes after Ctrl-C:\n" + printed
    assert took < _STOP_SECONDS, f"Ctrl-C took {took:.1f} s:\n{printed}"
    # No error, on the screen or in the logs: every pool process was stopped by its worker.
    assert "ERROR" not in printed and "Traceback" not in printed, printed
    assert not re.search(r"\bINFO\b", "".join(demo.output[before:])), printed
    for name in _LOGS:
        assert "exited with 'signal" not in (demo.var / "log" / name).read_text(), name


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
