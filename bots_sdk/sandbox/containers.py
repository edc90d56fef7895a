"""The Docker backend, on the Docker SDK for Python: each bot in a container of its own, on
whatever engine ``DOCKER_HOST`` names (a separate runner host's, typically), with nothing of
the referee's filesystem shared.

- **The bots' image** (``BIDEL_DOCKER_IMAGE``, default ``bidel-bot:latest``) holds Python, the
  engine, the SDK and the runtime's packages (:mod:`bots_sdk.runtime`, copied from the
  referee's installation). :func:`build_image` builds it *on the engine* from a context made in
  memory, so a remote engine needs no copy of our files; it is labelled with the digest of
  the SDK's sources, and :func:`check` refuses an image built from other sources (a referee
  and its bots must run the same engine).
- **The bot's code goes in on standard input**: each container starts
  :func:`bots_sdk.host.receive`, which waits for ``SIZE NAME`` and the bytes, writes them to
  its private ``/tmp`` and serves the protocol on the same stream. No bind mount, no archive
  on a read-only root.
- **A warm pool** (``BIDEL_DOCKER_POOL`` containers per set of limits, default 4) is started
  ahead of time, so a seat takes a container already running: the engine's start-up (seconds
  on some storage drivers) is hidden. A container serves one seat of one match, then is
  removed; the pool starts a fresh one in the background.
- **The referee talks to a container through a bridge process** (:func:`bridge`, run as a
  child of the referee with only the ``DOCKER_*`` settings in its environment): it attaches to
  the container, sends the code, then copies the referee's pipe to the container's input and
  splits the container's multiplexed output back to stdout and stderr. To the referee a
  containerised bot is one more process with pipes.
- **The clock**: a container is frozen between its turns (the engine's pause), so it cannot
  think on the others' time, and with one CPU its wall time bounds its CPU: the referee
  charges wall time. (The engine's stats cannot serve per move: after the first read each
  waits for the engine's next one-second sample.) **Out of memory** is the engine's
  ``OOMKilled``.
- **Labels and a janitor**: every container carries ``bidel.bot``, its owner
  (``host:pid``) and when it was made; :func:`janitor` removes the leftovers of referees that
  died, stopped containers, and any older than ``BIDEL_DOCKER_MAX_AGE`` seconds.

The Docker package is imported only when this backend is used: bot authors never need it.
"""

from __future__ import annotations

import atexit
import collections
import concurrent.futures
import hashlib
import io
import json
import logging
import os
import select
import socket
import struct
import sys
import tarfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bots_sdk import runtime
from bots_sdk.sandbox import cgroups, seccomp
from bots_sdk.sandbox import init as sandbox_init
from bots_sdk.sandbox.base import BuildJob, BuiltBot, Launch, Limits, SandboxUnavailable
from bots_sdk.sandbox.layers import NOT_BUILT
from engine import compiled_files

if TYPE_CHECKING:
    from docker import DockerClient

log = logging.getLogger(__name__)
SDK_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_IMAGE = "bidel-bot:latest"
DEFAULT_BASE = "python:3.11-slim-bookworm"
DEFAULT_POOL = 4
DEFAULT_MAX_AGE = 24 * 3600
#: Seconds a stopped container may wait for its referee to read its status and remove it.
STOPPED_GRACE = 600
#: The engine settings a bridge may inherit (nothing else of the referee's environment).
DOCKER_SETTINGS = ("DOCKER_HOST", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH", "DOCKER_API_VERSION")
LABEL = "bidel.bot"
SDK_LABEL = "bidel.sdk"
_RECEIVE = (
    "import sys; sys.path[:0] = ['/sdk']; from bots_sdk.host import receive, leave; "
    "leave(receive())"
)
_BRIDGE = (
    "import sys; sys.path[:0] = [{root!r}]; from bots_sdk.sandbox.containers import bridge; "
    "sys.exit(bridge())"
)


class Unavailable(RuntimeError):
    """The engine or the bots' image is not usable; the message says what to do."""


def image_name() -> str:
    return os.environ.get("BIDEL_DOCKER_IMAGE", DEFAULT_IMAGE)


def owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


# --- the engine ------------------------------------------------------------------------------

_clients: dict[int, DockerClient] = {}


def client() -> DockerClient:
    """This process's client of the engine ``DOCKER_HOST`` names (the local socket if unset)."""
    pid = os.getpid()
    if pid not in _clients:
        try:
            import docker
        except ImportError:
            raise Unavailable(
                "the Docker backend needs the docker package (pip install docker)"
            ) from None
        try:
            _clients[pid] = docker.from_env(timeout=60)
            _clients[pid].ping()
        except docker.errors.DockerException as exc:
            _clients.pop(pid, None)
            raise Unavailable(f"no Docker engine answers: {str(exc)[:200]}") from None
    return _clients[pid]


def sdk_files() -> list[Path]:
    """What the bots' image holds: the engine and the SDK, their Python files and, where the
    compiled engine is built here and matches them, that build (its extensions and manifest,
    docs/engine.md: the bots' base image runs the same Python 3.11, like the wheels mypyc
    compiles for PyPI)."""
    files = [
        path
        for package in ("engine", "bots_sdk")
        for path in (SDK_ROOT / package).rglob("*.py")
        if "__pycache__" not in path.parts
    ]
    files += [Path(name) for name in compiled_files()]
    return sorted(files)


def sdk_digest() -> str:
    """A digest of :func:`sdk_files` (paths and contents) and of the runtime's packages (names
    and versions): the image's ``bidel.sdk`` label."""
    digest = hashlib.sha256()
    for path in sdk_files():
        digest.update(path.relative_to(SDK_ROOT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    for package in runtime.packages():
        digest.update(f"{package.name}=={package.version}".encode() + b"\0")
    return digest.hexdigest()[:16]


def _context(base: str, digest: str) -> bytes:
    dockerfile = (
        f"FROM {base}\n"
        "COPY sdk /sdk\n"
        "RUN python -m compileall -q /sdk && chmod -R a+rX,go-w /sdk\n"
        "USER 65534:65534\n"
        "WORKDIR /tmp\n"
        f"LABEL {SDK_LABEL}={digest}\n"
    )
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        entry = tarfile.TarInfo("Dockerfile")
        entry.size = len(dockerfile.encode())
        tar.addfile(entry, io.BytesIO(dockerfile.encode()))
        for path in sdk_files():
            tar.add(path, arcname=f"sdk/{path.relative_to(SDK_ROOT).as_posix()}")
        # The runtime's packages as installed here (the same files the local sandbox binds;
        # the base image's Python is 3.11 like ours): no index is reached at build time.
        for folder, at in runtime.binds():
            tar.add(folder, arcname=at.lstrip("/"), filter=_no_bytecode)
    return buffer.getvalue()


def _no_bytecode(entry: tarfile.TarInfo) -> tarfile.TarInfo | None:
    return None if "__pycache__" in entry.name.split("/") else entry


def build_image(tag: str | None = None, base: str | None = None) -> str:
    """Build the bots' image on the engine (nothing of ours needs to be on its host); returns
    its tag. ``base`` (``BIDEL_DOCKER_BASE``) must have ``python`` 3.11 on its PATH."""
    tag = tag or image_name()
    base = base or os.environ.get("BIDEL_DOCKER_BASE", DEFAULT_BASE)
    engine = client()
    digest = sdk_digest()
    try:
        engine.images.build(
            fileobj=io.BytesIO(_context(base, digest)),
            custom_context=True,
            tag=tag,
            rm=True,
            forcerm=True,
            pull=False,
            network_mode="none",
        )
    except Exception as exc:  # docker.errors.BuildError / APIError: say which and why
        raise Unavailable(f"building {tag!r} from {base!r} failed: {str(exc)[:300]}") from None
    return tag


def check() -> None:
    """Raise :class:`Unavailable` unless the engine answers and holds the bots' image, built
    from these very sources."""
    import docker

    engine = client()
    name = image_name()
    try:
        image = engine.images.get(name)
    except docker.errors.ImageNotFound:
        raise Unavailable(
            f"the bots' image {name!r} is not on the Docker host: build it with "
            "`python -m bots_sdk docker-image` (BIDEL_DOCKER_IMAGE names another)"
        ) from None
    built_from = (image.labels or {}).get(SDK_LABEL)
    if built_from != sdk_digest():
        raise Unavailable(
            f"the bots' image {name!r} holds other SDK sources ({built_from or 'unlabelled'}, "
            f"these are {sdk_digest()}): rebuild it with `python -m bots_sdk docker-image`"
        )


# --- containers ------------------------------------------------------------------------------


def container_options(limits: Limits) -> dict[str, object]:
    """How every bot container is made (``containers.create`` keywords): no network, a
    read-only root and a private ``/tmp`` (bytes and files capped), one CPU, memory without
    swap, a process cap, rlimits, no capabilities, no new privileges, the bots' seccomp
    filter, an unprivileged user, an empty environment, and our labels."""
    from docker.types import Ulimit

    cpu = limits.cpu_seconds
    return {
        "command": ["python", "-I", "-S", "-B", "-c", _RECEIVE],
        "stdin_open": True,
        "network_mode": "none",
        "read_only": True,
        "tmpfs": {
            "/tmp": f"size={limits.tmp_mb}m,nr_inodes={limits.tmp_files},mode=1777,nosuid,nodev"
        },
        "mem_limit": f"{limits.memory_mb}m",
        "memswap_limit": f"{limits.memory_mb}m",
        "pids_limit": limits.processes,
        "nano_cpus": 1_000_000_000,
        "ulimits": [
            # (per process, as in the other backends: an allocation past it is a MemoryError
            # at once, where the container's limit alone would first make it crawl)
            Ulimit(name="as", soft=limits.memory_mb << 20, hard=limits.memory_mb << 20),
            Ulimit(name="cpu", soft=cpu, hard=cpu + 1),
            Ulimit(name="fsize", soft=limits.file_size_mb << 20, hard=limits.file_size_mb << 20),
            Ulimit(name="nofile", soft=limits.open_files, hard=limits.open_files),
            Ulimit(name="core", soft=0, hard=0),
        ],
        "cap_drop": ["ALL"],
        "security_opt": [
            "no-new-privileges",
            "seccomp=" + json.dumps(seccomp.docker_profile(), separators=(",", ":")),
        ],
        "user": "65534:65534",
        "environment": {},
        "working_dir": "/tmp",
        "init": True,
        "ipc_mode": "private",
        "labels": {
            LABEL: "1",
            "bidel.owner": owner(),
            "bidel.created": str(int(time.time())),
            "bidel.limits": _key(limits),
        },
    }


#: Docker's own masked paths (moby's defaults, which a list of ours replaces), then what
#: /proc tells of the whole machine (bots_sdk.sandbox.init.MASKED_PROC_FILES). The engine
#: covers each with an empty file or folder where its kernel has it and skips the rest.
MASKED_PATHS = (
    "/proc/asound",
    "/proc/acpi",
    "/proc/kcore",
    "/proc/timer_stats",
    "/proc/scsi",
    "/sys/firmware",
    "/sys/devices/virtual/powercap",
    *(
        f"/proc/{name}"
        for name in (*sandbox_init.MASKED_PROC_FILES, *sandbox_init.MASKED_PROC_FOLDERS)
    ),
)
#: The options of :func:`container_options` that describe the container itself; the rest are
#: its host configuration.
_CREATE_OPTIONS = frozenset(
    {"command", "stdin_open", "user", "environment", "working_dir", "labels"}
)


def _key(limits: Limits) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(vars(limits).items()))


#: Containers made to start one bot before the engine's failure is the runner's: on a busy
#: host the engine's runtime now and then fails a start ("OCI runtime start failed: container
#: process is already dead") that a fresh container does not.
START_TRIES = 3


def _start(limits: Limits) -> str:
    """Make and start one container; returns its id. A start the engine fails (a server
    error) is tried again with a fresh container, :data:`START_TRIES` containers in all."""
    import docker

    api = client().api
    options = container_options(limits)
    host = api.create_host_config(**{k: v for k, v in options.items() if k not in _CREATE_OPTIONS})
    host["MaskedPaths"] = list(MASKED_PATHS)  # (the SDK has no argument for it)
    for attempt in range(1, START_TRIES + 1):
        made = api.create_container(
            image_name(),
            host_config=host,
            **{k: v for k, v in options.items() if k in _CREATE_OPTIONS},
        )
        try:
            api.start(made["Id"])
            return str(made["Id"])
        except docker.errors.APIError as exc:
            _remove(made["Id"])
            if attempt == START_TRIES or not exc.is_server_error():
                raise
            log.warning("the engine failed to start a bot's container (%s): another", exc)
        except BaseException:
            _remove(made["Id"])
            raise
    raise AssertionError("unreachable: the last try returns or raises")  # pragma: no cover


def _remove(container_id: str) -> None:
    import docker

    api = client().api
    for attempt in (1, 2, 3):
        try:
            api.remove_container(container_id, force=True)
            return
        except docker.errors.NotFound:
            return
        except docker.errors.APIError as exc:
            if exc.status_code == 409 and "in progress" in str(exc):
                try:  # an earlier attempt is still removing it: wait for that one
                    api.wait(container_id, timeout=60, condition="removed")
                except Exception:  # noqa: BLE001 — (gone in the meantime, or the engine's trouble)
                    pass
                return
            failure: Exception = exc
        except Exception as exc:  # noqa: BLE001 — the engine's trouble: again, then the janitor's
            failure = exc
        if attempt == 3:
            log.warning("could not remove bot container %s: %s", container_id[:12], failure)


def _running(container_id: str) -> bool:
    try:
        return bool(client().api.inspect_container(container_id)["State"]["Running"])
    except Exception as exc:  # noqa: BLE001
        log.warning("bot container %s is not usable: %s", container_id[:12], exc)
        return False


class Pool:
    """Started containers waiting for a bot, per set of limits. :meth:`take` hands one out
    (or starts one cold when none waits) and starts its replacement in the background."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.ready: dict[str, collections.deque[str]] = collections.defaultdict(collections.deque)
        self.starting: collections.Counter[str] = collections.Counter()
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.closed = False

    def take(self, limits: Limits) -> tuple[str, bool]:
        """A running container for a bot under ``limits``, and whether it was warm."""
        key = _key(limits)
        while True:
            with self.lock:
                waiting = self.ready[key].popleft() if self.ready[key] else None
            self.fill(limits)
            if waiting is None:
                return _start(limits), False
            if _running(waiting):
                return waiting, True
            _remove(waiting)  # (removed by someone else's janitor, or died: take the next)

    def fill(self, limits: Limits) -> None:
        """Start, in the background, what the pool lacks for ``limits``."""
        key = _key(limits)
        with self.lock:
            missing = self.size - len(self.ready[key]) - self.starting[key]
            self.starting[key] += max(missing, 0)
        for _ in range(max(missing, 0)):
            threading.Thread(target=self._add, args=(limits, key), daemon=True).start()

    def _add(self, limits: Limits, key: str) -> None:
        try:
            container_id = _start(limits)
        except Exception:  # noqa: BLE001 — a cold start will say what is wrong
            container_id = None
        with self.lock:
            self.starting[key] -= 1
            self.changed.notify_all()
            if container_id is not None and not self.closed:
                self.ready[key].append(container_id)
                return
        if container_id is not None:
            _remove(container_id)

    def settle(self, timeout: float = 300) -> bool:
        """Wait until no container is being started; whether that happened in ``timeout``."""
        with self.lock:
            return self.changed.wait_for(lambda: not +self.starting, timeout)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            waiting = [cid for queue in self.ready.values() for cid in queue]
            self.ready.clear()
        for container_id in waiting:
            _remove(container_id)


_pools: dict[int, Pool] = {}


def pool() -> Pool:
    """This process's warm pool (``BIDEL_DOCKER_POOL`` per set of limits; 0 starts every
    container cold). The first call also sweeps leftovers (:func:`janitor`)."""
    pid = os.getpid()
    if pid not in _pools:
        janitor()
        _pools[pid] = Pool(int(os.environ.get("BIDEL_DOCKER_POOL", DEFAULT_POOL)))
        atexit.register(_pools[pid].close)
    return _pools[pid]


def launch(bot: Path, seat: int, limits: Limits) -> Launch:
    """A seat's bot in a container of the pool, spoken to through :func:`bridge`."""

    container_id, _warm = pool().take(limits)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    env.update({name: os.environ[name] for name in DOCKER_SETTINGS if name in os.environ})
    argv = [
        sys.executable,
        "-I",
        "-c",
        _BRIDGE.format(root=str(SDK_ROOT)),
        container_id,
        str(bot.resolve()),
    ]
    turns = Turns(container_id)

    def cleanup() -> None:
        turns.close()
        if turns.frozen:
            turns._set(False)  # (a frozen container is slow to kill on some engines)
        _remove(container_id)

    return Launch(
        argv,
        env,
        oom=lambda: _oom(container_id),
        cleanup=cleanup,
        resume=turns.resume,
        suspend=turns.suspend,
    )


# The engine records a pause or an unpause from an event that comes after its call has
# answered, so a call made just after the opposite one can be refused as if it were already done
# ("... is not paused" while the container is frozen). Such a call is tried again, these many
# seconds apart, until the record has caught up.
SETTLE_WAITS = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6)
_LAGGING = {True: "is already paused", False: "is not paused"}


class Turns:
    """Freezes a container between its turns (the engine's pause: the cgroup freezer), so a
    bot cannot think on others' time and its wall clock bounds its CPU. Resuming waits for the
    engine; freezing is queued behind it, off the referee's path."""

    def __init__(self, container_id: str) -> None:
        self.container_id = container_id
        self.worker = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        self.frozen = False

    def _set(self, frozen: bool) -> None:
        if frozen == self.frozen:
            return
        api = client().api
        call = api.pause if frozen else api.unpause
        for wait in (*SETTLE_WAITS, None):
            try:
                call(self.container_id)
                break
            except Exception as exc:  # noqa: BLE001 — exited or removed: nothing to (un)freeze
                said = str(getattr(exc, "explanation", "") or exc)
                if wait is None or _LAGGING[frozen] not in said:
                    break
                time.sleep(wait)  # (the engine's record of the last call has not caught up)
        # Recorded whatever the call answered: a pause that failed is undone harmlessly by the
        # next resume (the engine answers "not paused" once its record settles), while one that
        # reported an error and froze all the same would otherwise never be undone.
        self.frozen = frozen

    def resume(self) -> None:
        self.worker.submit(self._set, False).result()

    def suspend(self) -> None:
        self.worker.submit(self._set, True)

    def close(self) -> None:
        self.worker.shutdown(wait=True)


def _oom(container_id: str) -> bool:
    try:
        return bool(client().api.inspect_container(container_id)["State"]["OOMKilled"])
    except Exception:  # noqa: BLE001
        return False


def janitor(max_age: float | None = None) -> int:
    """Remove bot containers left behind: those stopped for a while, those of a referee on
    this host that is gone, and any older than ``max_age`` seconds (``BIDEL_DOCKER_MAX_AGE``,
    a day). Returns how many it removed."""
    if max_age is None:
        max_age = float(os.environ.get("BIDEL_DOCKER_MAX_AGE", DEFAULT_MAX_AGE))
    here = socket.gethostname()
    removed = 0
    for found in client().api.containers(all=True, filters={"label": LABEL}):
        labels = found.get("Labels") or {}
        host, _, pid = labels.get("bidel.owner", ":").rpartition(":")
        age = time.time() - int(labels.get("bidel.created", "0") or 0)
        orphan = host == here and pid.isdigit() and not cgroups.alive(int(pid))
        stopped = found.get("State") != "running" and age > STOPPED_GRACE
        if stopped or orphan or age > max_age:
            _remove(found["Id"])
            removed += 1
    return removed


def janitor_all() -> int:
    """Remove every bot container on the engine, in use or not (an operator's reset)."""
    listed = client().api.containers(all=True, filters={"label": LABEL})
    for found in listed:
        _remove(found["Id"])
    return len(listed)


# --- the bridge ------------------------------------------------------------------------------

_STDOUT, _STDERR = 1, 2


def bridge(argv: list[str] | None = None) -> int:
    """``bridge CONTAINER BOT``: attach to the container, send it the bot's code, then copy
    our stdin to its input and its multiplexed output to our stdout and stderr until it ends.
    Exits with the container's status (137 when killed)."""
    container_id, bot = (sys.argv[1:] if argv is None else argv)[:2]
    code = Path(bot).read_bytes()
    api = client().api
    attached = api.attach_socket(
        container_id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
    )
    sock: socket.socket = getattr(attached, "_sock", attached)
    sock.setblocking(True)
    sock.sendall(f"{len(code)} {Path(bot).name}\n".encode() + code)
    frames = bytearray()
    stdin_open = True
    while True:
        watched: list[socket.socket | int] = [sock, 0] if stdin_open else [sock]
        pending = getattr(sock, "pending", lambda: 0)()  # (TLS: bytes already decrypted)
        readable: list[socket.socket | int] = (
            [sock] if pending else select.select(watched, [], [])[0]
        )
        if 0 in readable:
            data = os.read(0, 65536)
            if data:
                sock.sendall(data)
            else:
                stdin_open = False
                try:
                    sock.shutdown(socket.SHUT_WR)  # the container's stdin ends
                except OSError:
                    pass
        if sock in readable:
            try:
                chunk = sock.recv(65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            frames += chunk
            while len(frames) >= 8:
                stream, size = struct.unpack(">BxxxL", frames[:8])
                if len(frames) < 8 + size:
                    break
                payload = bytes(frames[8 : 8 + size])
                del frames[: 8 + size]
                _write_all(_STDERR if stream == _STDERR else _STDOUT, payload)
    try:
        status = int(api.wait(container_id, timeout=30)["StatusCode"])
    except Exception:  # noqa: BLE001 — removed under us: it was killed
        status = 137
    return min(max(status, 0), 255)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BrokenPipeError:
            return
        except BlockingIOError:
            select.select([], [fd], [])


# --- the backend ---------------------------------------------------------------------------


@dataclass
class Docker:
    """The production backend: each bot in a container of its own on the engine
    ``DOCKER_HOST`` names, through the Docker SDK for Python (this module): no network, a read-only
    root, memory, CPU and process limits, no capabilities, the bots' seccomp filter, an unprivileged
    user, an empty environment, and no path of the referee's shared (the code goes in on the
    container's input). A warm pool hides the engine's start-up. Point it at a separate runner
    host's engine, never a worker's local socket: the
    socket is root-equivalent.
    """

    limits: Limits = field(default_factory=Limits)
    layers: list[str] = field(
        default_factory=lambda: [
            "container: no network, read-only root, private tmpfs (bytes and files)",
            "memory, CPU, process limits of the whole container",
            "no capabilities, no new privileges, seccomp filter, uid 65534",
            "empty environment, nothing shared with the referee's host",
        ]
    )

    @staticmethod
    def check() -> None:
        """Raise :class:`SandboxUnavailable` unless a Docker engine answers with the bots'
        image, built from these SDK sources."""
        try:
            check()
        except Unavailable as exc:
            raise SandboxUnavailable(str(exc)) from None

    @staticmethod
    def build_launch(job: BuildJob) -> Launch:
        raise SandboxUnavailable(NOT_BUILT.format(backend="docker"))

    def launch(self, bot: Path | BuiltBot, seat: int) -> Launch:
        if isinstance(bot, BuiltBot) or bot.is_dir():  # (a folder: a compiled bot's)
            raise SandboxUnavailable(NOT_BUILT.format(backend="docker"))
        try:
            return launch(bot, seat, self.limits)
        except Unavailable as exc:
            raise SandboxUnavailable(str(exc)) from None

    @staticmethod
    def janitor() -> int:
        """Remove the bot containers left behind (see :func:`janitor`)."""
        return janitor()
