"""Building a bot in another language, in the sandbox, once per version of its code.

A bot with a manifest naming a compiled language (:mod:`bots_sdk.builds.languages`) is built before
it plays: its files are unpacked into a folder the build sees read-only at ``/src``; in the
sandbox (no network, its own uid, the seccomp filter, no environment but ``PATH`` and
``HOME``) the packer (:mod:`bots_sdk.builds.packer`, a process the build cannot reach) copies them
into its private ``/tmp``, runs the manifest's build line with its output on stderr, stops
whatever the build left running, and writes the built folder to stdout as a stream of plain
files and folders. The build has limits of its own (:class:`BuildLimits`): CPU seconds,
memory, processes, wall time, the bytes and files its ``/tmp`` may hold, the size of what it
returns and of its log. The referee reads the stream as hostile (:func:`_extract`: any fault
of it is the build's, a :class:`BuildError`), into a cache keyed by the code's sha256 and the
toolchain's versions, and that folder (read-only at ``/bot``) is what every match of the
version runs. The cache holds at most ``BIDEL_BUILD_CACHE_MB`` and forgets the builds used
least recently first, never one a seat on this host holds (:class:`Lease`).

>>> asked = {"language": "cpp", "build": "make", "run": ["./bot"]}
>>> key = cache_key(b"code", asked, "g++ 12")
>>> len(key), key == cache_key(b"code", asked, "g++ 13"), key == cache_key(b"code", asked, "g++ 12")
(64, False, True)
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import io
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from bots_sdk.builds import packer
from bots_sdk.builds.languages import (
    LANGUAGES,
    MANIFESTS,
    Manifest,
    ManifestError,
    manifest_of,
    zip_root,
)
from bots_sdk.builds.zips import MAX_FILES, ZipRefused, members
from bots_sdk.sandbox import BuildJob, BuiltBot, Launcher, Limits, SandboxUnavailable

#: A folder a bot's files may not come from when packed (build outputs, tools' own).
SKIPPED_FOLDERS = frozenset({"target", "classes", "node_modules", "build", "__pycache__"})
#: Characters of a successful build's log shown with the bot's stderr.
NOTE_LOG = 8192
#: The most a packed bot may weigh: what the platform takes as an upload.
MAX_PACKED = 1024 * 1024
#: What a built folder holds at most: files and folders, as a stream from the sandbox.
MAX_BUILT_FILES = 2000
#: The build cache's size when ``BIDEL_BUILD_CACHE_MB`` does not say (32 builds at their
#: largest, hundreds of the kits' size).
CACHE_MB = 2048
#: The packer, run by the build's sandbox in place of a shell (stdlib only).
PACKER = Path(packer.__file__).resolve()
_MiB = 1024 * 1024


def build_argv(
    build_line: str,
    sources: str,
    folder: str,
    *,
    python: str,
    script: str,
    limits: BuildLimits,
    sandboxed: bool,
) -> list[str]:
    """The build's command: the packer (``script``, run by ``python``) copies ``sources`` to
    ``folder``, builds there (its output to stderr), then writes the folder to stdout as a
    stream, or its verdict (:mod:`bots_sdk.builds.packer`).

    >>> build_argv("make", "/src", "/tmp/build", python="/usr/bin/python3",
    ...            script="/sdk/packer.py", limits=BuildLimits(), sandboxed=True)[4:]
    ['/sdk/packer.py', 'sandboxed', '67108864', '2000', '/src', '/tmp/build', 'make']
    """
    return [
        python,
        "-I",
        "-S",
        "-B",
        script,
        "sandboxed" if sandboxed else "unsandboxed",
        str(limits.output_mb * _MiB),
        str(MAX_BUILT_FILES),
        sources,
        folder,
        build_line or "true",
    ]


def _build_command(
    build_line: str,
    python: str,
    limits: BuildLimits,
    sources: str,
    folder: str,
    script: str,
    sandboxed: bool,
) -> list[str]:
    """:func:`build_argv` as a :data:`~bots_sdk.sandbox.base.BuildCommand`: told by the
    launcher where it put the sources, the build's folder and the packer."""
    return build_argv(
        build_line,
        sources,
        folder,
        python=python,
        script=script,
        limits=limits,
        sandboxed=sandboxed,
    )


class BuildError(RuntimeError):
    """The bot could not be built: ``reason`` in a line, ``log`` what the build printed."""

    def __init__(self, reason: str, log: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.log = log


#: What a whole build may use by default: a bot's kinds of limit (:class:`Limits`), larger.
BUILD_SIZES = Limits(
    memory_mb=2048,
    cpu_seconds=120,
    processes=64,
    file_size_mb=128,
    open_files=256,
    tmp_mb=256,
    tmp_files=20000,
)


@dataclass(frozen=True)
class BuildLimits:
    """A build's limits: ``sizes``, what the sandbox holds it to (of its whole process tree
    where the host gives cgroups, else of each process: rlimits, always set too), and three of
    its own: ``wall_seconds``, ``output_mb`` (what it returns) and ``log_bytes`` (the log
    kept: its stderr).

    >>> BuildLimits(sizes=replace(BUILD_SIZES, cpu_seconds=2), log_bytes=4096).sandboxed
    Limits(memory_mb=2048, cpu_seconds=2, processes=64, file_size_mb=128, open_files=256, \
tmp_mb=256, tmp_files=20000, stderr_bytes=4096)
    """

    sizes: Limits = BUILD_SIZES
    wall_seconds: int = 300
    output_mb: int = 64
    log_bytes: int = 64 * 1024

    @property
    def sandboxed(self) -> Limits:
        """The limits the launcher applies: the sizes, the build's log as its stderr."""
        return replace(self.sizes, stderr_bytes=self.log_bytes)


@dataclass(frozen=True)
class Toolchain:
    """What a language needs of this host: folders bound read-only where they are (a
    toolchain outside ``/usr``, the JDK's configuration under ``/etc``), folders put first on
    ``PATH``, and a fingerprint of the versions (part of the cache key)."""

    language: str
    binds: tuple[str, ...] = ()
    path: tuple[str, ...] = ()
    versions: str = ""
    missing: tuple[str, ...] = field(default=())

    @property
    def env_path(self) -> str:
        return ":".join([*self.path, "/usr/local/bin", "/usr/bin", "/bin"])


def _version(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{argv[0]}: {type(exc).__name__}"
    return (done.stdout + done.stderr).strip().splitlines()[0] if done.stdout + done.stderr else ""


def _which(tool: str) -> str | None:
    """A program on ``PATH``, or where rustup installs (a service's PATH often lacks it)."""
    extra = [str(Path.home() / ".cargo" / "bin"), "/usr/local/cargo/bin"]
    return shutil.which(tool, path=os.pathsep.join([os.environ.get("PATH", ""), *extra]))


@functools.cache
def toolchain(language: str) -> Toolchain:
    """The toolchain of ``language`` on this host (looked up once per process)."""
    spec = LANGUAGES[language]
    missing = tuple(tool for tool in spec.tools if _which(tool) is None)
    if missing:
        return Toolchain(language, missing=missing)
    binds: list[str] = []
    path: list[str] = []
    versions: list[str] = []
    for tool in spec.tools:
        where = _which(tool)
        assert where is not None
        if tool == "rustc":
            # rustup's proxy needs its home: bind the toolchain itself and call it directly.
            sysroot = subprocess.run(
                [where, "--print", "sysroot"], capture_output=True, text=True, timeout=60
            ).stdout.strip()
            if sysroot and not sysroot.startswith("/usr/"):
                binds.append(sysroot)
                path.append(f"{sysroot}/bin")
            versions.append(_version([where, "--version"]))
        elif tool == "cc":
            versions.append(_version([where, "--version"]))
        else:
            real = os.path.realpath(where)
            if not real.startswith("/usr/"):
                binds.append(os.path.dirname(real))
                path.append(os.path.dirname(real))
            versions.append(
                _version([where, "-version" if tool in ("java", "javac") else "--version"])
            )
    if language == "java":  # Debian's JDK reaches its configuration through /etc
        binds += [str(p) for p in sorted(Path("/etc").glob("java-*-openjdk")) if p.is_dir()]
    if Path("/etc/alternatives").is_dir():  # Debian's `cc`, `java`, ... are links through it
        binds.append("/etc/alternatives")
    return Toolchain(language, tuple(binds), tuple(path), " | ".join(versions))


def cache_key(code: bytes, manifest: Mapping[str, object], versions: str) -> str:
    """The build cache's key: the code's sha256, what the manifest asks, the toolchain."""
    digest = hashlib.sha256()
    digest.update(hashlib.sha256(code).digest())
    digest.update(json.dumps(manifest, sort_keys=True).encode())
    digest.update(versions.encode())
    return digest.hexdigest()


def cache_root() -> Path:
    """Where built bots are kept: ``BIDEL_BUILD_CACHE``, else the user's cache folder."""
    configured = os.environ.get("BIDEL_BUILD_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "bidel" / "builds"


def cache_cap() -> int:
    """The build cache's size cap in bytes: ``BIDEL_BUILD_CACHE_MB`` MiB (default
    :data:`CACHE_MB`); a setting that is not a whole number above 0 is refused, loudly, as
    this host's failure (:class:`SandboxUnavailable`: it cannot build), never a bot's.

    >>> cache_cap() >= 1024 * 1024
    True
    """
    configured = os.environ.get("BIDEL_BUILD_CACHE_MB", "").strip() or str(CACHE_MB)
    if not (configured.isascii() and configured.isdigit()) or int(configured) < 1:
        raise SandboxUnavailable(
            f"BIDEL_BUILD_CACHE_MB must be a whole number of MiB above 0, not {configured!r}"
        )
    return int(configured) * _MiB


@dataclass
class Lease:
    """A shared lock on one build in the cache (``flock`` on ``<key>.lock`` beside it), held
    by each seat that runs it for as long as it runs: the cache never evicts a leased build.
    """

    fd: int | None

    def release(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.close(fd)  # (and the lock with it)


def _lock_path(root: Path, key: str) -> Path:
    return root / f"{key}.lock"


def _take(root: Path, key: str, how: int) -> int | None:
    """A descriptor of ``key``'s lock file holding ``how`` (``LOCK_SH``, or ``LOCK_EX |
    LOCK_NB``: None when another holds it). The lock file is checked to be the one at its
    path once held (an eviction unlinks it under its exclusive lock, so an old one is stale).
    """
    path = _lock_path(root, key)
    for _ in range(1000):
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, how)
            held, there = os.fstat(fd), os.stat(path, follow_symlinks=False)
        except (BlockingIOError, FileNotFoundError) as exc:
            os.close(fd)
            if isinstance(exc, BlockingIOError):
                return None
            continue
        except BaseException:
            os.close(fd)
            raise
        if (held.st_ino, held.st_dev) == (there.st_ino, there.st_dev):
            return fd
        os.close(fd)
    raise OSError(f"the build cache's lock {path} keeps being replaced")


def _is_key(name: str) -> bool:
    return len(name) == 64 and all(c in "0123456789abcdef" for c in name)


def _entry_bytes(entry: Path) -> int:
    facts = json.loads((entry / "build.json").read_text())
    if isinstance(facts.get("bytes"), int):
        return int(facts["bytes"])
    return _folder_bytes(entry)


def _folder_bytes(folder: Path) -> int:
    total = 0
    for above, _, files in os.walk(folder):
        for name in files:
            total += os.lstat(os.path.join(above, name)).st_size
    return total


def _last_used(entry: Path) -> int:
    try:
        return (entry / "used").stat().st_mtime_ns
    except FileNotFoundError:
        return (entry / "build.json").stat().st_mtime_ns


def _mark_used(entry: Path) -> None:
    used = entry / "used"
    used.touch()
    os.utime(used)


def evict(root: Path, cap: int, keep: str = "") -> list[str]:
    """Forget the builds used least recently until the cache holds at most ``cap`` bytes;
    never ``keep``, nor a build a seat on this host holds (:class:`Lease`). The keys
    forgotten, in that order; leftovers of interrupted builds and evictions go too."""
    now = time.time()
    found: list[tuple[int, str, int]] = []
    for path in root.iterdir():
        name = path.name
        try:
            if name.startswith(".evict-") or (
                name.startswith(".tmp-") and now - path.lstat().st_mtime > 3600
            ):
                shutil.rmtree(path, ignore_errors=True)
            elif _is_key(name) and path.is_dir() and (path / "build.json").is_file():
                found.append((_last_used(path), name, _entry_bytes(path)))
            elif name.endswith(".lock") and _is_key(name[:-5]) and not (root / name[:-5]).exists():
                _forget_lock(root, name[:-5])
        except FileNotFoundError:  # forgotten meanwhile by another referee of this host
            continue
    total = sum(size for _, _, size in found)
    gone: list[str] = []
    for _, key, size in sorted(found):
        if total <= cap:
            break
        if key == keep:
            continue
        fd = _take(root, key, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if fd is None:  # a seat is running it
            continue
        try:
            total -= size
            if not (root / key / "build.json").is_file():  # forgotten meanwhile, elsewhere
                _lock_path(root, key).unlink(missing_ok=True)
                continue
            doomed = Path(tempfile.mkdtemp(prefix=f".evict-{key[:12]}-", dir=root))
            os.rename(root / key, doomed / key)
            _lock_path(root, key).unlink()  # (under the exclusive lock: see _take)
        finally:
            os.close(fd)
        shutil.rmtree(doomed, ignore_errors=True)
        gone.append(key)
    return gone


def _forget_lock(root: Path, key: str) -> None:
    """Remove the lock file of a key with no build (a build that failed), unless held."""
    fd = _take(root, key, fcntl.LOCK_EX | fcntl.LOCK_NB)
    if fd is None:
        return
    try:
        if not (root / key).exists():
            _lock_path(root, key).unlink(missing_ok=True)
    finally:
        os.close(fd)


# --- the code: packed from a folder, unpacked safely --------------------------------------


def pack(folder: Path) -> bytes:
    """A bot folder as the zip the platform takes: the manifest and the language's source
    files (build outputs, hidden files and tools' folders left out), in a fixed order with
    fixed dates, so the same folder always packs to the same bytes (and the same build).

    Raises :class:`ManifestError` for a folder without a usable manifest."""
    manifest = manifest_of(folder)
    suffixes = LANGUAGES[manifest.language].sources
    names: list[str] = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if any(part.startswith(".") or part in SKIPPED_FOLDERS for part in relative.parts):
            continue
        if path.is_symlink() or not path.is_file():
            continue
        name = relative.as_posix()
        if name in MANIFESTS or path.suffix in suffixes or path.name.upper().startswith("README"):
            names.append(name)
    if len(names) > MAX_FILES:
        raise ManifestError(f"{folder} holds {len(names)} files to pack; the limit is {MAX_FILES}")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in names:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, (folder / name).read_bytes())
    return out.getvalue()


def unpack(code: bytes, into: Path) -> None:
    """Write a zip's files under ``into`` (readable by all: the build runs as another uid),
    read as hostile (:func:`bots_sdk.builds.zips.members`: what could escape ``into`` or
    exceed the upload's caps is refused, as the platform refused it at upload), the zip's
    root folder, if it has one, left out."""
    into.mkdir(mode=0o755, parents=True, exist_ok=True)
    into.chmod(0o755)
    try:
        found = list(members(code))
    except ZipRefused as exc:
        raise BuildError(f"the code is refused: {exc}") from None
    root = zip_root([entry.filename for entry, _, _ in found])
    for entry, _, content in found:
        if root and entry.filename.rstrip("/") + "/" == root:
            continue
        inside = PurePosixPath(entry.filename[len(root) :].replace("\\", "/"))
        target = into.joinpath(*inside.parts)
        if entry.is_dir():
            target.mkdir(mode=0o755, parents=True, exist_ok=True)
            continue
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        target.write_bytes(content)
        target.chmod(0o644)
    for folder in [into, *(p for p in into.rglob("*") if p.is_dir())]:
        folder.chmod(0o755)


# --- building ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Built:
    """A built bot: its folder (what runs), the manifest, the build's log and time, whether
    it came from the cache, and the lease that keeps it there while it is used."""

    folder: Path
    manifest: Manifest
    log: str
    seconds: float
    cached: bool
    lease: Lease | None = field(default=None, compare=False, repr=False)

    def note(self) -> str:
        """For the bot's log: a line, then what the build printed (its warnings), if anything,
        at most :data:`NOTE_LOG` characters of it."""
        how = "from the cache" if self.cached else f"in {self.seconds:.1f} s"
        line = f"built ({self.manifest.language}) {how}: {' '.join(self.manifest.run)}"
        said = self.log.strip()
        if not said:
            return line
        cut = f"\n[{len(said) - NOTE_LOG} more characters of the build's log]"
        return f"{line}\n{said[:NOTE_LOG]}{cut if len(said) > NOTE_LOG else ''}"


def built(
    code: bytes, manifest: Manifest, launcher: Launcher, limits: BuildLimits | None = None
) -> Built:
    """The built folder of ``code``: from the cache, else built now in ``launcher``'s sandbox
    (and cached, the cache then held to :func:`cache_cap`), with a :class:`Lease` on it that
    the caller releases once nothing runs it. Raises :class:`BuildError` with the log when the
    build fails, or its output is refused."""
    limits = limits or BuildLimits()
    tools = toolchain(manifest.language)
    if tools.missing:
        raise BuildError(
            f"{', '.join(tools.missing)} is not installed here: {manifest.language} bots "
            "cannot be built on this host"
        )
    cap = cache_cap()
    key = cache_key(code, manifest.to_dict(), tools.versions)
    root = cache_root()
    entry = root / key
    root.mkdir(parents=True, exist_ok=True)
    fd = _take(root, key, fcntl.LOCK_SH)
    assert fd is not None  # (a blocking lock)
    lease = Lease(fd)
    try:
        if (entry / "bot").is_dir() and (entry / "build.json").is_file():
            facts = json.loads((entry / "build.json").read_text())
            log = (entry / "build.log").read_text(errors="replace")
            _mark_used(entry)
            seconds = float(facts.get("seconds", 0.0))
            return Built(entry / "bot", manifest, log, seconds, True, lease)
        log, seconds = _build_into(code, manifest, tools, launcher, limits, entry)
        evict(root, cap, keep=key)
    except BaseException:
        lease.release()
        _forget_lock(root, key)
        raise
    return Built(entry / "bot", manifest, log, seconds, False, lease)


def _build_into(
    code: bytes,
    manifest: Manifest,
    tools: Toolchain,
    launcher: Launcher,
    limits: BuildLimits,
    entry: Path,
) -> tuple[str, float]:
    """Build ``code`` and keep what it built at ``entry``: (its log, its seconds)."""
    with tempfile.TemporaryDirectory(prefix="bidel-build-") as scratch:
        sources = Path(scratch) / "src"
        unpack(code, sources)
        started = time.monotonic()
        output, log = _run_build(sources, manifest, tools, launcher, limits)
        seconds = time.monotonic() - started
    staging = Path(tempfile.mkdtemp(prefix=".tmp-", dir=entry.parent))
    try:
        _extract(output, staging / "bot", limits)
        (staging / "build.log").write_text(log)
        (staging / "used").touch()
        facts = {"seconds": seconds, "manifest": manifest.to_dict(), "tools": tools.versions}
        facts["bytes"] = _folder_bytes(staging) + 200  # (with these facts themselves)
        (staging / "build.json").write_text(json.dumps(facts))
        staging.chmod(0o755)
        try:
            staging.rename(entry)
        except OSError:  # built meanwhile by another process: theirs is as good
            shutil.rmtree(staging, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return log, seconds


def _run_build(
    sources: Path, manifest: Manifest, tools: Toolchain, launcher: Launcher, limits: BuildLimits
) -> tuple[bytes, str]:
    """Run the build in the sandbox: (the stream, the log), or :class:`BuildError` (the
    build's doing), or :class:`SandboxUnavailable` (the host failed it: the sandbox never
    started the packer, or the packer says it cannot work here)."""
    command = functools.partial(
        _build_command, manifest.build, os.path.realpath(sys.executable), limits
    )
    job = BuildJob(
        sources, PACKER, command, limits.sandboxed, binds=tools.binds, path=tools.env_path
    )
    launch = launcher.build_launch(job)
    process = launch.popen(stdin=subprocess.DEVNULL)
    output = bytearray()
    log = bytearray()
    dropped = 0
    stopped = ""
    most = len(packer.STARTED) + packer.stream_bytes(limits.output_mb * _MiB, MAX_BUILT_FILES)
    deadline = time.monotonic() + limits.wall_seconds
    assert process.stdout is not None and process.stderr is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ, "out")
        selector.register(process.stderr, selectors.EVENT_READ, "log")
        while selector.get_map() and not stopped:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                stopped = f"it ran past its wall-clock limit ({limits.wall_seconds} s)"
                break
            for key, _ in selector.select(min(remaining, 1.0)):
                chunk = os.read(key.fileobj.fileno(), 65536)  # type: ignore[union-attr]
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                if key.data == "out":
                    output += chunk
                    if len(output) > most:
                        stopped = f"what it built is larger than {limits.output_mb} MiB"
                else:
                    room = limits.log_bytes - len(log)
                    log += chunk[: max(room, 0)]
                    dropped += max(0, len(chunk) - max(room, 0))
    if stopped:
        _kill(process)
    try:
        status = process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        _kill(process)
        status = process.wait()
    oom = launch.oom_killed()
    cpu = launch.cpu_seconds()
    launch.release()
    text = log.decode("utf-8", errors="replace")
    if dropped:
        text += f"\n[{dropped} more bytes of the build's log dropped]"
    if not output.startswith(packer.STARTED):  # nothing of the build ran: the host's failure
        last = next((line for line in reversed(text.splitlines()) if line.strip()), "")
        raise SandboxUnavailable(
            f"the build's sandbox did not start its packer (status {status}"
            + (f", {stopped}" if stopped else "")
            + ")"
            + (f": {last[:200]}" if last else "")
        )
    del output[: len(packer.STARTED)]
    if stopped:
        raise BuildError(f"the build was stopped: {stopped}", text)
    if oom:
        raise BuildError(
            f"the build was stopped at its memory limit ({limits.sizes.memory_mb} MiB)", text
        )
    if status == 0:
        return bytes(output), text
    verdict = _verdict(bytes(output)) if status == packer.VERDICT else {}
    if "host" in verdict:
        raise SandboxUnavailable(f"the build's packer cannot work here: {verdict['host']}")
    if "refused" in verdict:
        raise BuildError(f"the build's output is refused: {verdict['refused']}", text)
    failed = verdict.get("failed")
    at_limit = (
        f"the build was stopped at a limit (CPU {limits.sizes.cpu_seconds} s, memory "
        f"{limits.sizes.memory_mb} MiB, {limits.sizes.processes} processes; status {{status}})"
    )
    limit_statuses = (128 + signal.SIGXCPU, 128 + signal.SIGKILL, -signal.SIGXCPU, -signal.SIGKILL)
    if not isinstance(failed, int):  # no answer: the packer itself was stopped
        if status in limit_statuses or (cpu is not None and cpu >= limits.sizes.cpu_seconds):
            raise BuildError(at_limit.format(status=status), text)
        raise BuildError(f"the build ended without its packer's answer (status {status})", text)
    if failed in limit_statuses or (cpu is not None and cpu >= limits.sizes.cpu_seconds):
        raise BuildError(at_limit.format(status=failed), text)
    last = next((line for line in reversed(text.splitlines()) if line.strip()), "")
    raise BuildError(
        f"the build failed (status {failed})" + (f": {last[:200]}" if last else ""), text
    )


def _verdict(output: bytes) -> dict[str, Any]:
    """The packer's verdict (one JSON object of one known key), or ``{}`` if it is not one."""
    try:
        verdict = json.loads(output.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return {}
    if not isinstance(verdict, dict) or len(verdict) != 1:
        return {}
    ((name, value),) = verdict.items()
    if name in ("host", "refused") and isinstance(value, str):
        return {name: value[:500]}
    if name == "failed" and isinstance(value, int) and not isinstance(value, bool):
        return {name: value}
    return {}


def _kill(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _extract(stream: bytes, into: Path, limits: BuildLimits | None = None) -> None:
    """Unpack the stream a build sent back into ``into`` (made here), reading it as hostile:
    every member checked and counted against ``limits.output_mb`` and
    :data:`MAX_BUILT_FILES` first (:func:`bots_sdk.builds.packer.read_stream`: plain files and
    folders only, clean names, each once), then written, readable by all (the bot runs as
    another uid), executables kept executable. Any fault of the stream is a
    :class:`BuildError`; only a failure of this host's disk is an :class:`OSError`."""
    limits = limits or BuildLimits()
    try:
        members = packer.read_stream(stream, limits.output_mb * _MiB, MAX_BUILT_FILES)
    except packer.StreamError as exc:
        raise BuildError(f"the build's output is refused: {exc}") from None
    except Exception as exc:  # noqa: BLE001 — whatever a stream does is the build's doing
        raise BuildError(
            f"the build's output cannot be read ({type(exc).__name__}: {exc})"
        ) from None
    into.mkdir(mode=0o755)
    into.chmod(0o755)
    view = memoryview(stream)
    for member in members:
        target = os.path.join(into, *member.parts)
        if member.folder:
            os.mkdir(target, 0o755)
            os.chmod(target, 0o755)
            continue
        mode = 0o755 if member.executable else 0o644
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(target, flags, mode)
        try:
            content = view[member.start : member.start + member.size]
            while content:
                content = content[os.write(fd, content) :]
            os.fchmod(fd, mode)
        finally:
            os.close(fd)


# --- what the referee runs ----------------------------------------------------------------


@dataclass(frozen=True)
class Prepared:
    """What to launch for a bot (a Python bot's file, or a :class:`BuiltBot`), a note for its
    log, and the lease on its build (None for a Python bot) that the seat holds until it is
    closed."""

    bot: Path | BuiltBot
    note: str = ""
    lease: Lease | None = field(default=None, compare=False, repr=False)


def prepare(bot: Path, launcher: Launcher) -> Prepared:
    """What to launch for the bot at ``bot`` (a ``.py`` file, a zip or a folder): a Python bot
    as it is (a folder packed to a zip first), a compiled one built (or found in the cache)
    into its folder, leased. Raises :class:`BuildError` (with the log) when it cannot be
    built, :class:`ManifestError` when its manifest is unusable."""
    manifest = manifest_of(bot)
    if not manifest.compiled:
        if bot.is_dir():
            raise ManifestError(
                f"{bot} is a folder: give a Python bot's bot.py (or its zip), not its folder"
            )
        return Prepared(bot)
    code = pack(bot) if bot.is_dir() else bot.read_bytes()
    result = built(code, manifest, launcher)
    return Prepared(launchable(result.folder), result.note(), result.lease)


def launchable(folder: Path) -> BuiltBot:
    """A built folder as a launcher runs it: its run command and its toolchain's needs."""
    tools = toolchain(language_of(folder))
    return BuiltBot(
        folder.resolve(), tuple(run_command(folder)), binds=tools.binds, path=tools.env_path
    )


def run_command(folder: Path) -> list[str]:
    """The run command of a built folder (what the cache stored beside it)."""
    facts = json.loads((folder.parent / "build.json").read_text())
    return [str(word) for word in facts["manifest"]["run"]]


def language_of(folder: Path) -> str:
    return str(json.loads((folder.parent / "build.json").read_text())["manifest"]["language"])
