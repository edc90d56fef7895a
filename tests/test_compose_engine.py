"""docker-compose.yml on a real Docker engine, deployed as docs/operations.md's "Starting it"
says, from a copy of the checkout with an operator's files beside it: up and healthy with the
sandbox green; no secret and none of those files in any layer of the image; a user signs up
and uploads a bot, a runner container validates it, ladder matches with it are played there
and ranked; the runner holds no secret in its environment, its files or its image; the
red-team suite passes inside the runner's image with the runner's privileges; `down` leaves
no container.

Needs a Docker engine, Debian's docker-compose and the base images (`deploy/docker-engine.sh`
and `deploy/base-image.sh`, which `.ci/run` runs); skipped, saying which is missing, elsewhere.
The engine here has no bridge network, so a build's `RUN` steps have no network: the image is
built once with `--network host` from the same folder first, and the documented
`docker-compose up --build -d` then builds it again from the cache.
"""

from __future__ import annotations

import datetime
import gzip
import io
import json
import re
import secrets
import shutil
import socket
import subprocess
import tarfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import IO, Any

import pytest
import requests
import yaml

from tests.arena.test_runner_tier import LOOKER  # the bot that looks for the platform
from tests.support import DEADLINE, PROJECT_DIR, wait_until

# Building the images and starting seven containers takes minutes (on vfs, many), not seconds.
pytestmark = [pytest.mark.docker, pytest.mark.timeout(1800)]


def _missing() -> str:
    if shutil.which("docker") is None or shutil.which("docker-compose") is None:
        return "docker and docker-compose are not installed (deploy/docker-engine.sh)"
    info = subprocess.run(
        ["docker", "info", "--format", "{{.ServerVersion}}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if info.returncode != 0:
        return f"no Docker engine answers (deploy/docker-engine.sh): {info.stderr.strip()[:120]}"
    for image in ("python:3.11-slim-bookworm", "postgres:15", "redis:7"):
        if subprocess.run(["docker", "image", "inspect", image], capture_output=True).returncode:
            return f"the image {image} is missing (deploy/base-image.sh builds it offline)"
    return ""


def _run(
    *argv: str, timeout: float = 900, cwd: Path = PROJECT_DIR, **options: Any
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        list(argv), capture_output=True, text=True, timeout=timeout, cwd=cwd, **options
    )
    assert done.returncode == 0, f"{' '.join(argv)}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _compose(deployment: dict[str, Any], *argv: str) -> subprocess.CompletedProcess[str]:
    """``docker-compose`` in the deployment's folder, as its operator runs it there."""
    return _run("docker-compose", *argv, cwd=deployment["dir"], env=deployment["env"])


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _checkout(into: Path) -> None:
    """What a ``git clone`` of the project gives, with the work tree's changes: every file git
    tracks or would (``git ls-files -co --exclude-standard``) as it is now, links as links."""
    listed = _run("git", "ls-files", "-co", "--exclude-standard", "-z").stdout
    for name in filter(None, listed.split("\0")):
        source, target = PROJECT_DIR / name, into / name
        if not source.is_symlink() and not source.exists():
            continue  # deleted in the work tree, not yet committed
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(source.readlink())
        else:
            shutil.copy2(source, target)


def _starting_it(checkout: Path) -> tuple[str, str]:
    """docs/operations.md's "Starting it", as the two scripts an operator runs: writing .env,
    and bringing the deployment up (Debian's docker-compose 1.29 here, the form the docs name
    beside `docker compose`). The check with curl after it is the tests' own."""
    guide = (checkout / "docs" / "operations.md").read_text()
    block = guide.split("\n## Starting it\n", 1)[1].split("```", 2)[1]
    lines = block.strip("\n").splitlines()
    up = next(i for i, line in enumerate(lines) if line.startswith("docker compose up"))
    assert "cat > .env" in lines[0] and "chmod 600 .env" in lines[:up], block
    # the README's short form writes the same .env (it may scale the workers)
    readme = (checkout / "README.md").read_text()
    short = readme.split("\n### With docker compose\n", 1)[1].split("```", 2)[1]
    assert short.splitlines()[1 : up + 1] == lines[:up], short
    command = lines[up].split("#", 1)[0].strip().replace("docker compose ", "docker-compose ", 1)
    return "\n".join(lines[:up]) + "\n", command


def _neighbours(folder: Path) -> dict[str, str]:
    """Files an operator keeps beside docker-compose.yml, each with a marker of its own, by
    file: the backup line's dump (docs/operations.md, "Chores"), copies of .env, a key, an
    override file, folders of secrets and of runtime data."""
    today = datetime.date.today().isoformat()
    files = [
        f"bidel-{today}.dump",  # `... > bidel-$(date +%F).dump`, run in this folder
        ".env.local",
        ".env.production",
        ".env.bak",
        "backups/bidel-2024-01-31.dump",
        "secrets/postgres_password.txt",
        "var/bidel.log",
        "tls/server.key",
        "id_ed25519",
    ]
    markers = {name: f"operator-file-{name}-{secrets.token_hex(16)}" for name in files}
    for name, marker in markers.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(f"{marker}\n")
    # compose reads an override file by itself: this one adds a label to the web server
    override = f"override-{secrets.token_hex(16)}"
    markers["docker-compose.override.yml"] = override
    (folder / "docker-compose.override.yml").write_text(
        f'# {override}\nservices:\n  web:\n    labels:\n      org.example.contact: "ops"\n'
    )
    return markers


def _dotenv(path: Path) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)
    return {name.strip(): value.strip() for name, value in pairs}


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    missing = _missing()
    if missing:
        pytest.skip(missing)
    # The folder's name is compose's project name, as for an operator's own checkout.
    project = f"bideltest{secrets.token_hex(4)}"
    folder = tmp_path_factory.mktemp("deployment") / project
    folder.mkdir()
    _checkout(folder)
    write_env, up = _starting_it(folder)
    port = _free_port()
    # The deployment's own settings go in compose's environment; the secrets only in .env.
    env = {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "BIDEL_PORT": str(port),
        # a lost match is played again within a minute here (20 minutes by default)
        "MATCH_LEASE_SECONDS": "45",
        "REAP_SECONDS": "5",
        # on vfs, removing a container of the 1.4 GB runner image outlasts compose's default
        # 60 s read timeout ("Read timed out" from `down`)
        "COMPOSE_HTTP_TIMEOUT": "600",
    }
    _run("sh", "-ec", write_env, cwd=folder, env=env)
    dotenv = _dotenv(folder / ".env")
    assert set(dotenv) == {"SECRET_KEY", "POSTGRES_PASSWORD"} and all(dotenv.values()), dotenv
    assert (folder / ".env").stat().st_mode & 0o777 == 0o600
    markers = _neighbours(folder)
    _run("docker", "build", "--network", "host", "-t", "bidel:latest", ".", cwd=folder, env=env)
    deployed = {"project": project, "dir": folder, "base": f"http://127.0.0.1:{port}", "env": env}
    deployed.update(dotenv=dotenv, markers=markers)
    try:
        _run("sh", "-ec", up, cwd=folder, env=env)
        yield deployed
    finally:
        logs = subprocess.run(
            ["docker-compose", "logs", "--tail=200"],
            capture_output=True,
            text=True,
            cwd=folder,
            env=env,
        )
        (PROJECT_DIR / "var").mkdir(exist_ok=True)
        (PROJECT_DIR / "var" / "compose-test.log").write_text(logs.stdout + logs.stderr)
        subprocess.run(
            ["docker-compose", "down", "-v", "--remove-orphans"],
            capture_output=True,
            cwd=folder,
            env=env,
            timeout=600,
        )


def _staff(deployment: dict[str, Any]) -> requests.Session:
    """A session of a staff account, made as an operator makes one (``createsuperuser`` in
    the web container): the health report's details are the staff's."""
    if "staff" not in deployment:
        password = secrets.token_hex(16)
        _compose(
            deployment,
            "exec",
            "-T",
            "-e",
            f"DJANGO_SUPERUSER_PASSWORD={password}",
            "web",
            "python",
            "manage.py",
            "createsuperuser",
            "--noinput",
            "--username=operator",
            "--email=operator@example.com",
        )
        session = requests.Session()
        login = {"username": "operator", "password": password}
        answer = session.post(f"{deployment['base']}/api/token/", json=login, timeout=30)
        session.headers["Authorization"] = f"Token {answer.json()['token']}"
        deployment["staff"] = session
    return deployment["staff"]


def _health(deployment: dict[str, Any]) -> dict[str, Any] | None:
    """The health report, as staff read it, when it is 200."""
    try:
        session = _staff(deployment)
        response = session.get(f"{deployment['base']}/api/health/", timeout=10)
    except (requests.RequestException, AssertionError, KeyError, ValueError):
        return None  # (the web not up yet)
    return response.json() if response.status_code == 200 else None


def test_compose_up_is_healthy_with_the_sandbox_green(deployment: dict[str, Any]) -> None:
    health = wait_until(
        lambda: _health(deployment),
        "a healthy /api/health/",
        deadline=5 * DEADLINE,
        interval=1,
    )
    assert health["status"] == "ok"
    assert health["database"]["vendor"] == "postgresql" and health["runners"]["count"] >= 1
    assert health["sandbox"]["ok"] is True and health["sandbox"]["backend"] == "bubblewrap"
    assert health["sandbox"]["limits"].startswith("per bot:"), health["sandbox"]
    assert health["sandbox"]["packages"].startswith("numpy 2."), health["sandbox"]
    # the platform runs on the .env's secrets: the very values the image and runners are
    # searched for below
    (web,) = _containers(deployment, "web")
    environment = json.loads(_run("docker", "inspect", web).stdout)[0]["Config"]["Env"]
    dotenv = deployment["dotenv"]
    assert f"SECRET_KEY={dotenv['SECRET_KEY']}" in environment
    database = next(item for item in environment if item.startswith("DATABASE_URL="))
    assert f":{dotenv['POSTGRES_PASSWORD']}@postgres:" in database
    # the guides, which the allow-list admits to the image, are served
    guide = requests.get(f"{deployment['base']}/docs/operations/", timeout=30)
    assert guide.status_code == 200 and "What stays out of the image" in guide.text


class _Rejoined(io.RawIOBase):
    """A stream whose first bytes were read to tell what it is, given back in front."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self._head, self._rest = head, rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._head[: len(buffer)] or self._rest.read(len(buffer))
        self._head = self._head[len(data) :]
        buffer[: len(data)] = data
        return len(data)


def _is_archive(head: bytes) -> bool:
    """Whether a file beginning with ``head`` is a tar archive, plain or gzipped (a layer)."""
    return head[257:262] == b"ustar" or head[:2] == b"\x1f\x8b"


class _Scan:
    """What a tar stream holds of the needles (secrets, markers), by place: in any file's
    bytes, name or link, and any file named ``.env*``. With ``layers``, each archive in it is
    opened and read as well (``docker save``: an image's layers, its config, its history)."""

    def __init__(self, needles: dict[bytes, str]) -> None:
        self.needles = needles
        self.overlap = max(map(len, needles)) - 1
        self.found: set[str] = set()
        self.names: set[str] = set()

    def archive(self, stream: IO[bytes], where: str = "", *, layers: bool = False) -> None:
        with tarfile.open(fileobj=stream, mode="r|*") as tar:
            for member in tar:
                path = f"{where}{member.name}"
                self.names.add(path)
                self.text(f"{member.name} {member.linkname}".encode(), f"{path} (its name)")
                if PurePosixPath(member.name).name.startswith(".env"):
                    self.found.add(f"{path}: a file named .env*")
                content = tar.extractfile(member) if member.isfile() else None
                if content is None:
                    continue
                head = content.read(512)
                if layers and _is_archive(head):
                    self.archive(_Rejoined(head, content), f"{path}:")  # type: ignore[arg-type]
                elif head[:2] == b"\x1f\x8b":
                    self.compressed(head + content.read(), path)
                else:
                    self.content(head, content, path)

    def compressed(self, data: bytes, where: str) -> None:
        """A gzipped file (a manual page, a changelog...): its bytes, and what they unpack to."""
        self.text(data, where)
        try:
            unpacked = gzip.GzipFile(fileobj=io.BytesIO(data))
            self.content(unpacked.read(1 << 20), unpacked, f"{where} (unpacked)")
        except (OSError, EOFError, zlib.error):
            pass  # not gzip after all, or cut short: its bytes are read above

    def content(self, head: bytes, stream: IO[bytes], where: str) -> None:
        tail, chunk = b"", head
        while chunk:
            self.text(tail + chunk, where)
            tail = (tail + chunk)[-self.overlap :]
            chunk = stream.read(1 << 20)

    def text(self, data: bytes, where: str) -> None:
        for needle, what in self.needles.items():
            if needle in data:
                self.found.add(f"{where}: {what}")


def _scanned(argv: list[str], needles: dict[bytes, str], *, layers: bool) -> _Scan:
    """The scan of the tar a Docker command writes (``docker save``, ``docker export``),
    streamed: the image is too big to hold, and needs no copy on disk."""
    scan = _Scan(needles)
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None and process.stderr is not None
        scan.archive(process.stdout, layers=layers)
        process.stdout.read()  # (the archive's end blocks)
        error = process.stderr.read().decode(errors="replace")
    assert process.returncode == 0, f"{' '.join(argv)}: {error[-2000:]}"
    return scan


def test_the_scan_finds_a_needle_wherever_an_image_may_hold_it() -> None:
    """The scan of the tests below, on a small image of its own: a layer in the image, a file
    in the layer, plain, gzipped, cut across its reads, in a name, or named .env."""

    def tar(files: dict[str, bytes]) -> bytes:
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w") as archive:
            for name, data in files.items():
                member = tarfile.TarInfo(name)
                member.size = len(data)
                archive.addfile(member, io.BytesIO(data))
        return out.getvalue()

    needles = {b"needle-in-a-plain-file": "plain", b"needle-zipped": "zipped"}
    needles |= {b"needle-across-a-read": "across", b"needle-named": "named"}
    layer = tar(
        {
            "app/plain.txt": b"x" * 700 + b"needle-in-a-plain-file",
            "usr/share/doc/changelog.gz": gzip.compress(b"y" * 100 + b"needle-zipped"),
            "app/big.bin": b"z" * ((1 << 20) + 500) + b"needle-across-a-read",
            "app/needle-named.txt": b"",
            "app/sub/.env.bak": b"",
            "app/clean.txt": b"nothing to see",
        }
    )
    image = tar({"manifest.json": b"[]", "0123abcd/layer.tar": layer})
    scan = _Scan(needles)
    scan.archive(io.BytesIO(image), layers=True)
    assert {place.split(": ", 1)[1] for place in scan.found} == {
        "plain",
        "zipped",
        "across",
        "named",
        "a file named .env*",
    }, sorted(scan.found)
    assert "0123abcd/layer.tar:usr/share/doc/changelog.gz (unpacked): zipped" in scan.found
    clean = _Scan(needles)
    clean.archive(io.BytesIO(tar({"0/layer.tar": tar({"app/clean.txt": b"clean"})})), layers=True)
    assert not clean.found and "0/layer.tar:app/clean.txt" in clean.names


def _admitted(checkout: Path) -> set[str]:
    """The names .dockerignore admits to the image (its ``!name`` lines)."""
    lines = (checkout / ".dockerignore").read_text().splitlines()
    return {line[1:].strip() for line in lines if line.startswith("!")}


def test_the_dockerfile_checks_the_names_dockerignore_admits() -> None:
    """The Dockerfile's own check of what it copied lists the same names, and no name an
    operator keeps beside docker-compose.yml is admitted."""
    admitted = _admitted(PROJECT_DIR)
    assert {"arena", "hearts_platform", "hearts_runner", "engine", "bots_sdk", "sdk"} <= admitted
    assert "docs" in admitted  # served at /docs/<guide>/
    assert not {name for name in admitted if name.startswith(".") or "*" in name}, admitted
    dockerfile = (PROJECT_DIR / "Dockerfile").read_text()
    checked = re.search(r"grep -vxE '([^']*)'", dockerfile)
    assert checked is not None, "the Dockerfile does not check what it copied"
    assert {name.replace("\\.", ".") for name in checked[1].split("|")} == admitted
    assert "\nCOPY . .\nRUN unexpected=" in dockerfile  # (checked before the build runs)


def test_a_context_that_ignores_dockerignore_does_not_build(
    deployment: dict[str, Any], tmp_path: Path
) -> None:
    """A build sent the operator's whole folder (a tool that does not read .dockerignore, or a
    pattern lost) stops at the Dockerfile's check, naming what should not be there, and tags
    nothing. (The deployment's folder: its first steps are cached from the fixture's build.)"""
    folder = tmp_path / "checkout"
    shutil.copytree(deployment["dir"], folder, symlinks=True)
    (folder / ".dockerignore").unlink()
    tag = f"bidel-unguarded:{secrets.token_hex(4)}"
    argv = ["docker", "build", "--network", "host", "--force-rm", "-t", tag, "."]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900, cwd=folder)
    try:
        assert done.returncode != 0, done.stdout[-3000:]
        # (the step's own output comes first; the builder's error quotes the command after it)
        said = done.stdout + done.stderr
        assert "not for the image (.dockerignore): " in said, said[-3000:]
        refused = said.split("not for the image (.dockerignore):", 1)[1].split("The command")[0]
        kept = {".env", ".env.bak", "secrets", "tests", "deploy", "Makefile", "id_ed25519"}
        assert kept <= set(refused.split()), refused
        tagged = subprocess.run(["docker", "image", "inspect", tag], capture_output=True)
        assert tagged.returncode != 0
    finally:
        # the layer the refused build copied (with this test's .env): the builder keeps it
        for layer in re.findall(r"^ ---> ([0-9a-f]{12})$", done.stdout, re.MULTILINE)[-1:]:
            subprocess.run(["docker", "rmi", layer], capture_output=True)


def _needles(deployment: dict[str, Any]) -> dict[bytes, str]:
    """The .env's secrets and the operator's files' markers, each with what it is."""
    needles = {value.encode(): f".env's {name}" for name, value in deployment["dotenv"].items()}
    for name, marker in deployment["markers"].items():
        needles[marker.encode()] = f"the marker of {name} (beside docker-compose.yml)"
    return needles


def test_no_secret_nor_file_beside_the_compose_file_is_in_any_layer_of_the_image(
    deployment: dict[str, Any],
) -> None:
    needles = _needles(deployment)
    # a control, which the image must hold: the scan reads the bytes of the layers' files
    control = "\n## What stays out of the image\n"
    assert control in (deployment["dir"] / "docs" / "operations.md").read_text()
    scan = _scanned(
        ["docker", "save", "bidel:latest"], {**needles, control.encode(): "-"}, layers=True
    )
    held = {place for place in scan.found if place.endswith(": -")}
    assert any(place.endswith(":app/docs/operations.md: -") for place in held), sorted(held)
    assert not scan.found - held, sorted(scan.found - held)
    # the scan read the layers' files: the code's among them, and none of what stays out
    files = {name.split(":", 1)[1] for name in scan.names if ":" in name}
    assert {"app/manage.py", "app/hearts_runner/__main__.py", "app/docs/operations.md"} <= files
    assert "app/sdk/setup.py" in files and "app/bots_sdk/kits/cpp/main.cpp" in files
    # /app holds what .dockerignore admits and what the build itself writes there, no more
    held = {name.split("/")[1] for name in files if name.startswith("app/")}
    assert held == _admitted(deployment["dir"]) | {"bidel.egg-info", "build"}, sorted(held)
    kept_out = {"tests", "conftest.py", "examples", "deploy", "bench", "kits", "Makefile"}
    kept_out |= {"docker-compose.yml", "var", "secrets", "backups", "tls", "id_ed25519"}
    assert not held & kept_out, sorted(held)
    for argv in (
        ["docker", "history", "--no-trunc", "--format", "{{.CreatedBy}}", "bidel:latest"],
        ["docker", "image", "inspect", "bidel:latest"],
    ):
        described = _Scan(needles)
        described.text(_run(*argv).stdout.encode(), " ".join(argv))
        assert not described.found, sorted(described.found)


def _signed_up(base: str, name: str) -> requests.Session:
    session = requests.Session()
    user = {"username": name, "password": f"a long passphrase for {name}"}
    assert session.post(f"{base}/api/users/", json=user, timeout=30).status_code == 201
    token = session.post(f"{base}/api/token/", json=user, timeout=30).json()["token"]
    session.headers["Authorization"] = f"Token {token}"
    return session


def _upload(
    session: requests.Session, base: str, name: str, code: bytes, filename: str = ""
) -> int:
    """A bot that enters no ladder by itself (so no ladder match of it runs beside the test's
    own), with ``code`` as its first version."""
    bot = session.post(
        f"{base}/api/bots/", json={"name": name, "join_ladders": []}, timeout=30
    ).json()["id"]
    upload = session.post(
        f"{base}/api/bots/{bot}/versions/",
        files={"file": (filename or f"{name}.py", code)},
        timeout=60,
    )
    assert upload.status_code == 201, upload.text
    return int(bot)


def _settled(session: requests.Session, base: str, bot: int) -> Callable[[], Any]:
    def settled() -> Any:
        version = session.get(f"{base}/api/bots/{bot}/versions/1/", timeout=30).json()
        return version if version["status"] in ("active", "rejected") else None

    return settled


def _runners(deployment: dict[str, Any]) -> list[str]:
    """The deployment's running runner containers (a killed one stays, stopped)."""
    return _containers(deployment, "runner")


def _containers(deployment: dict[str, Any], service: str) -> list[str]:
    """The deployment's running containers of one service."""
    done = _run(
        "docker",
        "ps",
        "-q",
        "--no-trunc",
        "--filter",
        f"label=com.docker.compose.project={deployment['project']}",
        "--filter",
        f"label=com.docker.compose.service={service}",
    )
    return done.stdout.split()


def _runner_services(deployment: dict[str, Any]) -> list[str]:
    """The compose file's services that run the runner tier (bots', and people's if any)."""
    services = yaml.safe_load((deployment["dir"] / "docker-compose.yml").read_text())["services"]
    return sorted(
        name for name, service in services.items() if "hearts_runner" in service.get("command", [])
    )


def _django(deployment: dict[str, Any], code: str) -> str:
    """Run ``code`` in the platform's worker container (its Django, its database)."""
    return _compose(
        deployment, "exec", "-T", "worker", "python", "manage.py", "shell", "-c", code
    ).stdout


#: The hands of the match whose runner is killed.
HANDS = 8
SLOW = b"""import time
from bots_sdk import Bot, lowest


class Slow(Bot):
    def pass_cards(self, view):
        return view.hand[:3]

    def play(self, view):
        time.sleep(0.25)
        return lowest(view.legal)
"""


def test_a_runner_killed_mid_match_another_plays_it_and_it_is_stored_once(
    deployment: dict[str, Any],
) -> None:
    # (first of the tests with uploads: only this match's bot runs in a runner's sandbox)
    base = deployment["base"]
    _compose(deployment, "up", "-d", "--no-build", "--scale", "runner=2")
    wait_until(
        lambda: (_health(deployment) or {}).get("runners", {}).get("count", 0) >= 2,
        "two runners in the health report",
        deadline=5 * DEADLINE,
        interval=1,
    )
    session = _signed_up(base, "grace")
    bot = _upload(session, base, "slow", SLOW)
    version = wait_until(
        _settled(session, base, bot), "the slow bot's validation", deadline=3 * DEADLINE, interval=1
    )
    assert version["status"] == "active", version["validation_log"]
    # 8 hands of 13 plays of 0.25 s: the bot sits in a runner's sandbox for 26 s at least,
    # however fast the machine, ample for finding it there (a `docker top` of each runner a
    # second, slow on a busy host) and killing that runner mid-match.
    created = session.post(
        f"{base}/api/matches/",
        json={"seats": [bot, "low", "random", "heuristic"], "hands": HANDS},
        timeout=30,
    )
    assert created.status_code == 201, created.text
    match = created.json()["id"]

    def playing() -> str | None:  # the runner whose sandbox holds the slow bot now
        for container in _runners(deployment):
            top = subprocess.run(
                ["docker", "top", container, "-eo", "pid,args"], capture_output=True, text=True
            ).stdout
            # the bot's own process (a runner's sandbox probe runs bwrap too): the match's,
            # as the slow bot plays in no other (it enters no ladder)
            if "slow.py" in top:
                return container
        return None

    victim = wait_until(
        playing, "the match's bot in a runner's sandbox", deadline=2 * DEADLINE, interval=1
    )
    survivor = next(c for c in _runners(deployment) if c != victim)
    _run("docker", "kill", victim)
    try:
        _finished_once(deployment, session, match, survivor)
    finally:  # the killed runner stays stopped: back to one runner for the next tests
        _run("docker", "rm", "-f", victim)
        _compose(deployment, "up", "-d", "--no-build", "--scale", "runner=1")


def _finished_once(
    deployment: dict[str, Any], session: requests.Session, match: int, survivor: str
) -> None:
    base = deployment["base"]
    # a runner, compromised or confused, sends a result under a claim it does not hold
    forged = {
        "kind": "match",
        "ref": match,
        "claim": "forged",
        "ok": False,
        "cause": "sandbox",
        "error": "FORGED",
        "runner": "forger",
    }
    _run(
        "docker",
        "exec",
        survivor,
        "python",
        "-c",
        "import sys, json; from hearts_runner.celery import app; "
        "app.send_task('arena.job_finished', args=[json.loads(sys.argv[1])], queue='celery')",
        json.dumps(forged),
    )

    def done() -> Any:
        found = session.get(f"{base}/api/matches/{match}/", timeout=30).json()
        return found if found["status"] in ("finished", "failed") else None

    finished = wait_until(
        done, "the match played again by the other runner", deadline=7 * DEADLINE, interval=1
    )
    assert finished["status"] == "finished", finished
    record = session.get(f"{base}/api/matches/{match}/record/", timeout=30).json()
    assert len([hand for hand in record["hands"] if not hand.get("void")]) == HANDS
    stored = json.loads(
        _django(
            deployment,
            (
                f"import json; from arena.models import Match; m = Match.objects.get(pk={match}); "
                "print(json.dumps({'attempts': m.attempts, 'seats': m.seats.count(), "
                "'ranked': m.seats.exclude(rank=None).count(), 'error': m.error}))"
            ),
        )
        .strip()
        .splitlines()[-1]
    )
    assert stored["attempts"] >= 2, stored  # the first runner's claim was lost, then reissued
    assert stored["seats"] == stored["ranked"] == 4 and "FORGED" not in stored["error"], stored


def test_an_upload_is_validated_and_played_on_the_ladder_by_a_runner(
    deployment: dict[str, Any],
) -> None:
    base = deployment["base"]
    wait_until(
        lambda: _health(deployment), "a healthy /api/health/", deadline=5 * DEADLINE, interval=1
    )
    session = requests.Session()
    user = {"username": "ada", "password": "a long passphrase"}
    assert session.post(f"{base}/api/users/", json=user, timeout=30).status_code == 201
    token = session.post(f"{base}/api/token/", json=user, timeout=30).json()["token"]
    session.headers["Authorization"] = f"Token {token}"
    bot = session.post(f"{base}/api/bots/", json={"name": "looker"}, timeout=30).json()["id"]
    upload = session.post(
        f"{base}/api/bots/{bot}/versions/", files={"file": ("bot.py", LOOKER)}, timeout=60
    )
    assert upload.status_code == 201, upload.text

    def settled() -> Any:
        version = session.get(f"{base}/api/bots/{bot}/versions/1/", timeout=30).json()
        return version if version["status"] in ("active", "rejected") else None

    version = wait_until(
        settled, "the validation in a runner container", deadline=3 * DEADLINE, interval=1
    )
    assert version["status"] == "active", version["validation_log"]
    assert "LOOKED []" in version["validation_log"]  # nothing of the platform's to be found
    assert "entered the ladder(s): standard" in version["validation_log"]  # by itself
    joined = session.post(f"{base}/api/ladders/1/entries/", json={"bot": bot}, timeout=30)
    assert joined.status_code == 200, joined.text  # (already in: entering again changes nothing)

    def played() -> Any:
        page = session.get(
            f"{base}/api/matches/", params={"bot": bot, "status": "finished"}, timeout=30
        ).json()
        return page["results"] if page["count"] >= 1 else None

    matches = wait_until(
        played, "a ladder match with the uploaded bot", deadline=7 * DEADLINE, interval=1
    )
    record = session.get(f"{base}/api/matches/{matches[0]['id']}/record/", timeout=30).json()
    assert record["seed"] == matches[0]["seed"]
    rankings = wait_until(
        lambda: [
            r
            for r in session.get(f"{base}/api/ladders/1/rankings/", timeout=30).json()
            if r["bot"]["name"] == "looker" and r["rating"] is not None
        ],
        "the bot rated in the rankings (listed unrated at once, rated at a refit)",
        deadline=2 * DEADLINE,
        interval=1,
    )
    assert rankings[0]["matches"] >= 1


def test_the_starter_kits_build_and_validate_in_the_runner_container(
    deployment: dict[str, Any],
) -> None:
    """Each language's kit, as `bidel pack` zips it, is built by a runner container's
    toolchain (the image's) in its sandbox and validated."""
    from bots_sdk.builds.build import pack

    base = deployment["base"]
    wait_until(
        lambda: _health(deployment), "a healthy /api/health/", deadline=5 * DEADLINE, interval=1
    )
    # two authors, two kits each: a user may have only so many versions waiting at once
    # (UPLOAD_MAX_WAITING, 3 by default), and the four are built side by side
    authors = {"cpp": "polyglot", "rust": "polyglot", "java": "barista", "javascript": "barista"}
    sessions = {name: _signed_up(base, name) for name in sorted(set(authors.values()))}
    bots = {
        language: _upload(
            sessions[author],
            base,
            f"kit-{language}",
            pack(PROJECT_DIR / "kits" / language),
            f"{language}.zip",
        )
        for language, author in authors.items()
    }
    for language, bot in bots.items():
        session = sessions[authors[language]]
        version = wait_until(
            _settled(session, base, bot),
            f"the {language} kit's validation",
            deadline=7 * DEADLINE,
            interval=1,
        )
        log = version["validation_log"]
        assert version["status"] == "active", log
        assert f"built ({language}) in" in log, log


def test_the_runner_container_holds_no_secret(deployment: dict[str, Any]) -> None:
    """Not in its environment, its files or its image; nor a volume, nor the database's
    network: each container of each runner service. (After the tests that made runners
    validate, build and play: their caches too.)"""
    needles = _needles(deployment)
    services = _runner_services(deployment)
    assert "runner" in services, services
    ids = [container for service in services for container in _containers(deployment, service)]
    assert len(ids) >= len(services), (services, ids)  # one at least of each
    inspected = json.loads(_run("docker", "inspect", *ids).stdout)
    image = _run("docker", "image", "inspect", "--format", "{{.Id}}", "bidel:latest").stdout
    for container in inspected:
        names = {item.split("=", 1)[0] for item in container["Config"]["Env"]}
        assert not names & {"DATABASE_URL", "SECRET_KEY", "POSTGRES_PASSWORD"}, names
        assert not container["Mounts"], container["Mounts"]  # no volume, no socket
        assert not container["HostConfig"]["Privileged"]
        networks = set(container["NetworkSettings"]["Networks"])
        assert networks == {f"{deployment['project']}_broker"}, networks
        # the image whose every layer the test above reads
        assert container["Image"] == image.strip(), (container["Image"], image)
    described = _Scan(needles)
    described.text(json.dumps(inspected).encode(), "docker inspect")
    assert not described.found, sorted(described.found)
    for runner in ids:
        probe = _run(
            "docker",
            "exec",
            runner,
            "sh",
            "-c",
            # every process's environment, the runner's (pid 1) first
            "for f in /proc/1/environ /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done; "
            "ls /run/postgresql /var/run/postgresql 2>&1; "
            "getent hosts postgres || echo NO-POSTGRES",
        ).stdout
        assert "REDIS_URL=redis://redis:6379/0" in probe  # (the runner's own, read)
        assert "DATABASE_URL" not in probe and "SECRET_KEY" not in probe, probe
        assert "NO-POSTGRES" in probe  # the database's name does not even resolve
        described = _Scan(needles)
        described.text(probe.encode(), f"the environments in {runner[:12]}")
        assert not described.found, sorted(described.found)
        files = _scanned(["docker", "export", runner], needles, layers=False)
        assert not files.found, sorted(files.found)
        assert {"app/manage.py", "app/hearts_runner/__main__.py"} <= files.names


def test_the_red_team_suite_passes_inside_the_runners_image(
    deployment: dict[str, Any], tmp_path: Path
) -> None:
    # the suite's own context (the runner's image holds no test): the checkout's tests
    shutil.copy2(deployment["dir"] / "conftest.py", tmp_path / "conftest.py")
    shutil.copytree(
        deployment["dir"] / "tests",
        tmp_path / "tests",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    _run(
        "docker",
        "build",
        "--network",
        "host",
        "-f",
        "tests/docker/Dockerfile.hostile",
        "-t",
        "bidel-hostile:latest",
        ".",
        cwd=tmp_path,
    )
    done = subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            "--user",
            "0",
            "--cap-add",
            "SYS_ADMIN",
            "--cap-add",
            "NET_ADMIN",
            "--security-opt",
            "seccomp=./deploy/runner-seccomp.json",
            "--network",
            "none",
            "bidel-hostile:latest",
        ],
        capture_output=True,
        text=True,
        timeout=1500,
        cwd=deployment["dir"],  # (the seccomp profile's path is relative to it, as in compose)
    )
    tail = done.stdout[-4000:]
    assert done.returncode == 0, tail + done.stderr[-2000:]
    summary = tail.splitlines()[-1]
    assert " passed" in summary and " skipped" not in summary, tail


def test_with_no_runner_able_to_sandbox_uploads_are_rejected_saying_why_and_health_is_red(
    deployment: dict[str, Any],
) -> None:
    base = deployment["base"]
    _compose(deployment, "up", "-d", "--no-build", "--scale", "runner=0")
    # a runner started as an operator might by mistake: the image's user, Docker's defaults
    name = f"{deployment['project']}-unprivileged-runner"
    _run(
        "docker",
        "run",
        "-d",
        "--name",
        name,
        "--network",
        f"{deployment['project']}_broker",
        "-e",
        "REDIS_URL=redis://redis:6379/0",
        "bidel:latest",
        "python",
        "-m",
        "hearts_runner",
        "--concurrency=1",
    )
    try:

        def red() -> Any:
            response = _staff(deployment).get(f"{base}/api/health/", timeout=DEADLINE)
            body = response.json()
            return body if response.status_code == 503 and body["runners"]["count"] == 1 else None

        health = wait_until(
            red, "a red health report with the one runner", deadline=2 * DEADLINE, interval=1
        )
        assert health["sandbox"]["ok"] is False and health["sandbox"]["detail"], health
        session = _signed_up(base, "hedy")
        bot = _upload(session, base, "hopeful", SLOW)
        # (within the suite's one deadline: refused at once, not left waiting for a runner)
        version = wait_until(_settled(session, base, bot), "the upload's verdict", interval=1)
        assert version["status"] == "rejected", version
        assert "no runner could sandbox it" in version["validation_log"], version
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True)
        _compose(deployment, "up", "-d", "--no-build", "--scale", "runner=1")


def test_down_leaves_no_container(deployment: dict[str, Any]) -> None:
    _compose(deployment, "down", "-v", "--remove-orphans")
    left = _run(
        "docker",
        "ps",
        "-aq",
        "--filter",
        f"label=com.docker.compose.project={deployment['project']}",
    ).stdout
    assert left.split() == []
