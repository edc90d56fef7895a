"""Building a bot in another language, in the sandbox, once per version of its code.

A bot with a manifest naming a compiled language (:mod:`bots_sdk.languages`) is built before
it plays: its files are unpacked into a folder the build sees read-only at ``/src``; in the
sandbox (no network, its own uid, the seccomp filter, no environment but ``PATH`` and
``HOME``) a shell copies them into its private ``/tmp``, runs the manifest's build line with
its output on stderr, and writes the built folder to stdout as a tar stream. The build has
limits of its own (:class:`BuildLimits`): CPU seconds, memory, processes, wall time, the bytes
and files its ``/tmp`` may hold, the size of what it returns and of its log. The built folder
is kept in a cache keyed by the code's sha256 and the toolchain's versions, and that folder
(read-only at ``/bot``) is what every match of the version runs.

>>> asked = {"language": "cpp", "build": "make", "run": ["./bot"]}
>>> key = cache_key(b"code", asked, "g++ 12")
>>> len(key), key == cache_key(b"code", asked, "g++ 13"), key == cache_key(b"code", asked, "g++ 12")
(64, False, True)
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import selectors
import shutil
import signal
import stat
import subprocess
import tarfile
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from bots_sdk.languages import (
    LANGUAGES,
    MANIFESTS,
    Manifest,
    ManifestError,
    manifest_of,
    zip_root,
)

#: A folder a bot's files may not come from when packed (build outputs, tools' own).
SKIPPED_FOLDERS = frozenset({"target", "classes", "node_modules", "build", "__pycache__"})
#: The most files, and bytes unpacked, a bot's code may hold (as an upload).
MAX_FILES = 100
MAX_UNPACKED = 8 * 1024 * 1024
#: Characters of a successful build's log shown with the bot's stderr.
NOTE_LOG = 8192
#: The most a packed bot may weigh: what the platform takes as an upload.
MAX_PACKED = 1024 * 1024
#: What a built folder holds at most: files (and folders), as a tar stream from the sandbox.
MAX_BUILT_FILES = 2000

# Run by /bin/sh in the sandbox: $1 the build line, $2 the sources, $3 the build folder.
SCRIPT = (
    'mkdir -p "$3" && cp -R "$2"/. "$3" && cd "$3" && { sh -c "$1" </dev/null >&2; } '
    '&& { [ -z "$(find . -type l)" ] || { echo "the build left links in the folder; '
    'links are refused" >&2; exit 97; }; } && exec tar -cf - .'
)


def build_argv(build_line: str, sources: str, folder: str) -> list[str]:
    """The build's command in the sandbox: copy ``sources`` to ``folder``, build there (its
    output to stderr), then write the folder to stdout as a tar stream.

    >>> build_argv("make", "/src", "/tmp/build")[-3:]
    ['make', '/src', '/tmp/build']
    """
    return ["/bin/sh", "-c", SCRIPT, "sh", build_line or "true", sources, folder]


class BuildError(RuntimeError):
    """The bot could not be built: ``reason`` in a line, ``log`` what the build printed."""

    def __init__(self, reason: str, log: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.log = log


@dataclass(frozen=True)
class BuildLimits:
    """A build's limits: of its whole process tree where the host gives cgroups, else of each
    process (rlimits, always set too); ``tmp_mb`` and ``tmp_files`` cap the folder it builds
    in, ``output_mb`` what it returns, ``log_bytes`` the log kept."""

    cpu_seconds: int = 120
    wall_seconds: int = 300
    memory_mb: int = 2048
    processes: int = 64
    file_size_mb: int = 128
    open_files: int = 256
    tmp_mb: int = 256
    tmp_files: int = 20000
    output_mb: int = 64
    log_bytes: int = 64 * 1024

    def as_sandbox_limits(self) -> Any:
        from bots_sdk.sandbox import Limits

        return Limits(
            memory_mb=self.memory_mb,
            cpu_seconds=self.cpu_seconds,
            processes=self.processes,
            file_size_mb=self.file_size_mb,
            open_files=self.open_files,
            tmp_mb=self.tmp_mb,
            tmp_files=self.tmp_files,
            stderr_bytes=self.log_bytes,
        )


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


def cache_key(code: bytes, manifest: dict[str, Any], versions: str) -> str:
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
    refusing what could escape it or exceed the upload's caps."""
    into.mkdir(mode=0o755, parents=True, exist_ok=True)
    into.chmod(0o755)
    try:
        archive = zipfile.ZipFile(io.BytesIO(code))
        entries = archive.infolist()
    except (zipfile.BadZipFile, ValueError) as exc:
        raise BuildError(f"the code is not a readable zip ({exc})") from None
    if len(entries) > MAX_FILES:
        raise BuildError(f"the zip holds {len(entries)} entries; the limit is {MAX_FILES}")
    root = zip_root([entry.filename for entry in entries])
    total = 0
    for entry in entries:
        if root and entry.filename.rstrip("/") + "/" == root:
            continue
        path = PurePosixPath(entry.filename[len(root) :].replace("\\", "/"))
        if path.is_absolute() or ".." in path.parts or stat.S_ISLNK(entry.external_attr >> 16):
            raise BuildError(f"the zip entry {entry.filename!r} is refused (outside, or a link)")
        target = into.joinpath(*path.parts)
        if entry.is_dir():
            target.mkdir(mode=0o755, parents=True, exist_ok=True)
            continue
        with archive.open(entry) as handle:
            content = handle.read(MAX_UNPACKED - total + 1)
        total += len(content)
        if total > MAX_UNPACKED:
            raise BuildError(f"the zip unpacks to more than {MAX_UNPACKED} bytes")
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        target.write_bytes(content)
        target.chmod(0o644)
    for folder in [into, *(p for p in into.rglob("*") if p.is_dir())]:
        folder.chmod(0o755)


# --- building ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Built:
    """A built bot: its folder (what runs), the manifest, the build's log and time, and
    whether it came from the cache."""

    folder: Path
    manifest: Manifest
    log: str
    seconds: float
    cached: bool

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
    code: bytes, manifest: Manifest, launcher: Any, limits: BuildLimits | None = None
) -> Built:
    """The built folder of ``code``: from the cache, else built now in ``launcher``'s sandbox
    (and cached). Raises :class:`BuildError` with the log when the build fails."""
    limits = limits or BuildLimits()
    tools = toolchain(manifest.language)
    if tools.missing:
        raise BuildError(
            f"{', '.join(tools.missing)} is not installed here: {manifest.language} bots "
            "cannot be built on this host"
        )
    key = cache_key(code, manifest.to_dict(), tools.versions)
    root = cache_root()
    entry = root / key
    if (entry / "bot").is_dir() and (entry / "build.json").is_file():
        facts = json.loads((entry / "build.json").read_text())
        log = (entry / "build.log").read_text(errors="replace")
        return Built(entry / "bot", manifest, log, float(facts.get("seconds", 0.0)), True)
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bidel-build-") as scratch:
        sources = Path(scratch) / "src"
        unpack(code, sources)
        started = time.monotonic()
        output, log = _run_build(sources, manifest, tools, launcher, limits)
        seconds = time.monotonic() - started
        staging = Path(tempfile.mkdtemp(prefix=".tmp-", dir=root))
        try:
            _extract(output, staging / "bot")
            (staging / "build.log").write_text(log)
            (staging / "build.json").write_text(
                json.dumps(
                    {"seconds": seconds, "manifest": manifest.to_dict(), "tools": tools.versions}
                )
            )
            staging.chmod(0o755)
            try:
                staging.rename(entry)
            except OSError:  # built meanwhile by another process: theirs is as good
                shutil.rmtree(staging, ignore_errors=True)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return Built(entry / "bot", manifest, log, seconds, False)


def _run_build(
    sources: Path, manifest: Manifest, tools: Toolchain, launcher: Any, limits: BuildLimits
) -> tuple[bytes, str]:
    """Run the build in the sandbox: (the tar stream, the log), or :class:`BuildError`."""
    launch = launcher.build_launch(sources, manifest.build, tools, limits)
    try:
        process = subprocess.Popen(
            launch.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=launch.env,
            start_new_session=True,
            pass_fds=launch.pass_fds,
        )
    except BaseException:
        launch.release()
        raise
    finally:
        launch.started()
    output = bytearray()
    log = bytearray()
    dropped = 0
    stopped = ""
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
                    if len(output) > limits.output_mb * 1024 * 1024:
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
    if stopped:
        raise BuildError(f"the build was stopped: {stopped}", text)
    if oom:
        raise BuildError(
            f"the build was stopped at its memory limit ({limits.memory_mb} MiB)", text
        )
    if status != 0:
        if status in (
            -signal.SIGXCPU,
            -signal.SIGKILL,
            128 + signal.SIGXCPU,
            128 + signal.SIGKILL,
        ) or (cpu is not None and cpu >= limits.cpu_seconds):
            raise BuildError(
                f"the build was stopped at a limit (CPU {limits.cpu_seconds} s, memory "
                f"{limits.memory_mb} MiB, {limits.processes} processes; status {status})",
                text,
            )
        if status == 97:
            raise BuildError("the build left links in its folder; links are refused", text)
        last = next((line for line in reversed(text.splitlines()) if line.strip()), "")
        raise BuildError(
            f"the build failed (status {status})" + (f": {last[:200]}" if last else ""), text
        )
    return bytes(output), text


def _kill(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _extract(stream: bytes, into: Path) -> None:
    """Unpack the sandbox's tar stream by hand (no tarfile filter: Python 3.11.4+ only):
    plain files and folders only, each under ``into`` by a clean relative name, readable by
    all (the bot runs as another uid), executables kept executable."""
    into.mkdir(mode=0o755, parents=True)
    try:
        archive = tarfile.open(fileobj=io.BytesIO(stream), mode="r:")
        members = archive.getmembers()
    except tarfile.TarError as exc:
        raise BuildError(f"the build's output cannot be read ({exc})") from None
    if len(members) > MAX_BUILT_FILES:
        raise BuildError(f"the build made {len(members)} files; the limit is {MAX_BUILT_FILES}")
    try:
        for member in members:
            _extract_one(archive, member, into)
    except OSError as exc:  # (a name twice, as a file and as a folder, say)
        raise BuildError(f"the build's output cannot be unpacked ({exc})") from None
    for folder in [into, *(p for p in into.rglob("*") if p.is_dir())]:
        folder.chmod(0o755)


def _extract_one(archive: tarfile.TarFile, member: tarfile.TarInfo, into: Path) -> None:
    parts = [part for part in PurePosixPath(member.name).parts if part not in ("", ".")]
    if not (member.isfile() or member.isdir()):
        raise BuildError(f"the build made {member.name!r}, neither a file nor a folder")
    if PurePosixPath(member.name).is_absolute() or ".." in parts:
        raise BuildError(f"the build made {member.name!r}, outside its folder")
    target = into.joinpath(*parts)
    if member.isdir():
        target.mkdir(mode=0o755, parents=True, exist_ok=True)
        return
    target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    source = archive.extractfile(member)
    assert source is not None  # (a regular file)
    with source, open(target, "wb") as out:
        shutil.copyfileobj(source, out)
    target.chmod(0o755 if member.mode & 0o100 else 0o644)


# --- what the referee runs ----------------------------------------------------------------


def prepare(bot: Path, launcher: Any) -> tuple[Path, str]:
    """What to launch for the bot at ``bot`` (a ``.py`` file, a zip or a folder), and a note
    for its log: a Python bot as it is (a folder packed to a zip first), a compiled one built
    (or found in the cache) into its folder. Raises :class:`BuildError` (with the log) when
    it cannot be built, :class:`ManifestError` when its manifest is unusable."""
    manifest = manifest_of(bot)
    if not manifest.compiled:
        if bot.is_dir():
            raise ManifestError(
                f"{bot} is a folder: give a Python bot's bot.py (or its zip), not its folder"
            )
        return bot, ""
    code = pack(bot) if bot.is_dir() else bot.read_bytes()
    result = built(code, manifest, launcher)
    return result.folder, result.note()


def run_command(folder: Path) -> list[str]:
    """The run command of a built folder (what the cache stored beside it)."""
    facts = json.loads((folder.parent / "build.json").read_text())
    return [str(word) for word in facts["manifest"]["run"]]


def language_of(folder: Path) -> str:
    return str(json.loads((folder.parent / "build.json").read_text())["manifest"]["language"])
