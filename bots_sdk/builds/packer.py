"""The build's packer: the one process of a build that the build cannot reach, and the stream
it sends back.

A bot's build (:mod:`bots_sdk.builds.build`) is hostile code, run as the same uid as whatever packs
its output. So the packing is done by this script, standard library only, run with the
referee's interpreter (``python -I -S``) in the build's sandbox, where it is the PID
namespace's init (``bwrap --as-pid-1``: no process of bubblewrap's is inside with it):

1. It makes itself non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``), so that no process of the
   build may open its ``/proc/<pid>/mem`` or ``/proc/<pid>/fd/*``, uid or not; as the
   namespace's init, no signal from the build reaches it. It refuses to build when it cannot.
2. It copies the sources to the build's folder and runs the build line there, the line's
   output sent to the log: no process of the build holds the stream's descriptor.
3. When the line exits it kills every process left (``kill(-1, SIGKILL)`` from the init
   spares only itself) and waits until none is.
4. Only then it walks the folder itself, a folder at a time by its descriptor (``lstat``,
   ``O_NOFOLLOW``), refusing links, hard links, FIFOs, sockets and devices by name, names the
   stream cannot carry, and more files or bytes than the caps; and writes the stream.

Its answer is its exit status and its output, after :data:`STARTED`: 0 and the stream; or
:data:`VERDICT` and one JSON object: ``{"failed": status}`` (the build line failed),
``{"refused": reason}`` (what the build left, or did, is refused) or ``{"host": reason}``
(this host could not give the packer what it needs, before the build ran: the platform's
doing).

The stream is POSIX ustar in one narrow form, written by :func:`write_stream` and taken by
:func:`read_stream` (the referee reads it as hostile anyway): plain files and folders only,
each a 512-byte header with a valid checksum and the ustar magic, a folder before what it
holds, every name once, its folders' path at most 155 bytes and its own name at most 100 (so
ustar's two name fields hold it without an extension), no extension headers at all (pax, GNU
long names, sparse maps), zeros after the data, and two empty blocks at the end.

>>> entries = [Entry(("bin",), None, False), Entry(("bin", "bot"), b"ELF", True)]
>>> stream = write_stream(entries)
>>> [(m.name, m.folder, m.executable, m.size) for m in read_stream(stream, 10, 5)]
[('bin', True, False, 0), ('bin/bot', False, True, 3)]
>>> read_stream(stream[:1024], 10, 5)
Traceback (most recent call last):
...
bots_sdk.builds.packer.StreamError: the stream ends in the middle of 'bin/bot' (cut short?)
>>> name_problem(("src", "..", "etc"))
"a '..' in a name: outside its folder"
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

#: The packer's exit status when its output is a verdict (JSON), not a stream.
VERDICT = 97
#: What the packer writes first, as it starts (before anything of the build runs, on the
#: output no process of the build holds): an output without it is a sandbox that never
#: started the packer, the host's failure, never the build's.
STARTED = b"bidel-packer\n"
BLOCK = 512
#: ustar's name fields: a name's own part, and the path of the folders it is in.
NAME_BYTES = 100
FOLDER_BYTES = 155
#: The deepest a name may be, in folders.
MAX_DEPTH = 32
#: How long the packer waits for the build's last processes to die.
STOP_SECONDS = 30.0
_MAGIC = b"ustar\x0000"
_ZERO = bytes(BLOCK)
_FILE, _OLD_FILE, _FOLDER = b"0", b"\0", b"5"
#: What each refused member type is, for the refusal's message.
_TYPES = {
    b"1": "a hard link",
    b"2": "a symbolic link",
    b"3": "a character device",
    b"4": "a block device",
    b"6": "a FIFO",
    b"7": "a contiguous file",
    b"x": "a pax extended header",
    b"g": "a pax global header",
    b"L": "a GNU long name",
    b"K": "a GNU long link name",
    b"S": "a GNU sparse file",
    b"M": "a GNU multi-volume part",
    b"N": "a GNU old long name",
    b"V": "a volume label",
    b"D": "a GNU dump folder",
}
#: What each refused kind of file is, for the refusal's message.
_KINDS = {
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}
_MiB = 1024 * 1024


class StreamError(ValueError):
    """A stream that is not the packer's narrow form; the message says where and why."""


class Refused(Exception):
    """What a build left in its folder is refused; the message says what and why."""


@dataclass(frozen=True)
class Entry:
    """One name to write: its parts, its content (None: a folder), whether it is executable."""

    parts: tuple[str, ...]
    content: bytes | None
    executable: bool


@dataclass(frozen=True)
class Member:
    """One name read from a stream: its parts, whether it is a folder or an executable file,
    and where its content is in the stream."""

    parts: tuple[str, ...]
    folder: bool
    executable: bool
    start: int
    size: int

    @property
    def name(self) -> str:
        return "/".join(self.parts)


def name_problem(parts: Sequence[str]) -> str:
    """What is wrong with a name, by its parts (``""`` when nothing is): the one rule of the
    packer and of the referee.

    >>> name_problem(("classes", "Main$1.class")), name_problem(("a\\x00b",))
    ('', 'a control character in a name')
    """
    if not parts:
        return "an empty name"
    if len(parts) > MAX_DEPTH:
        return f"a name deeper than {MAX_DEPTH} folders"
    if parts[0] == "":
        return "an absolute name: outside its folder"
    if ".." in parts:
        return "a '..' in a name: outside its folder"
    for part in parts:
        if part in ("", ".") or "/" in part:
            return "a name with an empty or '.' part"
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in part):
            return "a control character in a name"
        try:
            size = len(part.encode("utf-8"))
        except UnicodeEncodeError:
            return "a name that is not UTF-8"
        if size > NAME_BYTES:
            return f"a name longer than {NAME_BYTES} bytes"
    if len("/".join(parts[:-1]).encode("utf-8")) > FOLDER_BYTES:
        return f"a name in folders whose path is longer than {FOLDER_BYTES} bytes"
    return ""


# --- the stream ------------------------------------------------------------------------------


def _header(parts: tuple[str, ...], size: int, executable: bool, folder: bool) -> bytes:
    block = bytearray(BLOCK)
    name, prefix = parts[-1].encode(), "/".join(parts[:-1]).encode()
    block[0 : len(name)] = name
    block[100:108] = b"%07o\0" % (0o755 if folder or executable else 0o644)
    block[108:116] = block[116:124] = b"0000000\0"
    block[124:136] = b"%011o\0" % size
    block[136:148] = b"%011o\0" % 0
    block[148:156] = b" " * 8
    block[156:157] = _FOLDER if folder else _FILE
    block[257:265] = _MAGIC
    block[345 : 345 + len(prefix)] = prefix
    block[148:156] = b"%06o\0 " % sum(block)
    return bytes(block)


def write_stream(entries: Sequence[Entry]) -> bytes:
    """The stream of ``entries`` (each folder before what it holds; names already checked)."""
    out = bytearray()
    for entry in entries:
        folder = entry.content is None
        size = 0 if entry.content is None else len(entry.content)
        out += _header(entry.parts, size, entry.executable, folder)
        if entry.content:
            out += entry.content
            out += bytes(-len(entry.content) % BLOCK)
    out += _ZERO + _ZERO
    return bytes(out)


def _text(field: bytes, what: str) -> str:
    cut = field.find(b"\0")
    if cut >= 0 and field[cut:].count(0) != len(field) - cut:
        raise StreamError(f"a NUL inside {what}")
    try:
        return (field if cut < 0 else field[:cut]).decode("utf-8")
    except UnicodeDecodeError:
        raise StreamError(f"{what} is not UTF-8") from None


def _octal(field: bytes, what: str) -> int:
    digits = field.rstrip(b"\0 ").lstrip(b" ")
    if not digits or digits.strip(b"01234567"):
        raise StreamError(f"{what} is not an octal number")
    return int(digits, 8)


def read_stream(data: bytes, max_bytes: int, max_files: int) -> list[Member]:
    """The members of a stream in the packer's form, each checked (type, name, size, place)
    and counted against ``max_bytes`` of content and ``max_files`` names before anything is
    written; anything else is a :class:`StreamError` saying where and why."""
    view = memoryview(data)
    members: list[Member] = []
    kinds: dict[tuple[str, ...], bool] = {}  # each name seen: a folder?
    total = 0
    at = 0
    while True:
        if at + BLOCK > len(data):
            raise StreamError("the stream ends before its end marker (cut short?)")
        block = bytes(view[at : at + BLOCK])
        if block == _ZERO:
            rest = view[at:]
            if len(rest) < 2 * BLOCK:
                raise StreamError("the stream ends after one empty block, not two (cut short?)")
            if bytes(rest).count(0) != len(rest):
                raise StreamError(f"bytes after the stream's end marker (at {at})")
            return members
        shown = block[345:500].split(b"\0")[0] + b"/" + block[0:100].split(b"\0")[0]
        where = f"{shown.lstrip(b'/').decode('utf-8', 'replace')!r} (the header at {at})"
        if _octal(block[148:156], f"the checksum of {where}") != (
            sum(block[:148]) + 8 * 32 + sum(block[156:])
        ):
            raise StreamError(f"{where} has a wrong checksum")
        kind = block[156:157]
        if kind not in (_FILE, _OLD_FILE, _FOLDER):
            what = _TYPES.get(kind, f"of an unknown type {kind!r}")
            raise StreamError(f"{where} is {what}: only files and folders are taken")
        if block[257:265] != _MAGIC:
            raise StreamError(f"{where} is not POSIX ustar (its magic is {block[257:265]!r})")
        prefix = _text(block[345:500], f"the name of {where}")
        own = _text(block[0:100], f"the name of {where}")
        if block[157:257].strip(b"\0"):
            raise StreamError(f"{where} names a link target")
        name = f"{prefix}/{own}" if prefix else own
        folder = kind == _FOLDER
        if folder and name.endswith("/"):
            name = name[:-1]
        parts = tuple(name.split("/"))
        problem = name_problem(parts)
        if problem:
            raise StreamError(f"{name!r}: {problem}")
        size = _octal(block[124:136], f"the size of {name!r}")
        mode = _octal(block[100:108], f"the mode of {name!r}")
        if folder and size:
            raise StreamError(f"the folder {name!r} has a size")
        if parts in kinds:
            raise StreamError(f"{name!r} is in the stream twice")
        above = parts[:-1]
        if above and kinds.get(above) is not True:
            whose = "under a file" if above in kinds else "before its folder"
            raise StreamError(f"{name!r} comes {whose} ({'/'.join(above)!r})")
        if len(members) >= max_files:
            raise StreamError(f"more than {max_files} files and folders")
        total += size
        if total > max_bytes:
            raise StreamError(f"more than {max_bytes} bytes of files")
        start = at + BLOCK
        end = start + size + (-size % BLOCK)
        if end > len(data):
            raise StreamError(f"the stream ends in the middle of {name!r} (cut short?)")
        if bytes(view[start + size : end]).count(0) != end - start - size:
            raise StreamError(f"bytes after the content of {name!r}")
        kinds[parts] = folder
        members.append(Member(parts, folder, not folder and bool(mode & 0o100), start, size))
        at = end


def stream_bytes(max_bytes: int, max_files: int) -> int:
    """The longest stream of at most ``max_bytes`` in ``max_files`` names: the content, a
    header and at most a block of padding each, and the end marker.

    >>> stream_bytes(0, 0)
    1024
    """
    return max_bytes + max_files * 2 * BLOCK + 2 * BLOCK


# --- the packer --------------------------------------------------------------------------


def _protect(sandboxed: bool) -> str:
    """Make this process unreachable by the build; what could not be done (``""``: all)."""
    import ctypes  # (here: the referee imports this module for the stream alone)

    pr_get_dumpable, pr_set_dumpable, pr_set_child_subreaper = 3, 4, 36
    if sandboxed and os.getpid() != 1:
        return f"the packer is not its sandbox's PID 1 (it is {os.getpid()})"
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError as exc:
        return f"cannot reach the C library to call prctl ({exc})"
    if libc.prctl(pr_set_dumpable, 0, 0, 0, 0) != 0:
        return f"prctl(PR_SET_DUMPABLE, 0) failed: {os.strerror(ctypes.get_errno())}"
    if libc.prctl(pr_get_dumpable, 0, 0, 0, 0) != 0:
        return "the packer is still dumpable after prctl(PR_SET_DUMPABLE, 0)"
    # Outside a sandbox (the author's debug mode) the build's orphans must still come back to
    # the packer to be waited for; the init of a namespace gets them anyway.
    if not sandboxed and libc.prctl(pr_set_child_subreaper, 1, 0, 0, 0) != 0:
        return f"prctl(PR_SET_CHILD_SUBREAPER) failed: {os.strerror(ctypes.get_errno())}"
    # (Python's own handler would let a SIGINT from the build reach the init of a namespace.)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    return ""


def _descendants() -> list[int]:
    """Every process below this one (outside a sandbox, where kill(-1) would reach others)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, queue = [], [os.getpid()]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def _stop_the_rest(sandboxed: bool) -> str:
    """Kill every process of the build still alive and reap them all; ``""`` once none is
    left, else why not."""
    deadline = time.monotonic() + STOP_SECONDS
    while True:
        for pid in [-1] if sandboxed else _descendants():
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:  # every process of the build is gone, and reaped
            return ""
        if time.monotonic() > deadline:
            return f"processes of the build were still alive {STOP_SECONDS:.0f} s after it ended"
        time.sleep(0.005)


def _read(folder: int, name: str, found: os.stat_result, shown: str) -> bytes:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    try:
        opened = os.fstat(fd)
        if (opened.st_ino, opened.st_dev) != (found.st_ino, found.st_dev):
            raise Refused(f"{shown!r} changed while it was packed")
        chunks, left = [], found.st_size
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        if left or os.read(fd, 1):
            raise Refused(f"{shown!r} changed while it was packed")
        return b"".join(chunks)
    finally:
        os.close(fd)


def walk(folder: str, max_bytes: int, max_files: int) -> list[Entry]:
    """What the build left in ``folder``, checked and counted (nothing of the build runs by
    now), as the stream's entries; :class:`Refused` saying what and why otherwise."""
    entries: list[Entry] = []
    total = 0

    def visit(fd: int, above: tuple[str, ...]) -> None:
        nonlocal total
        for name in sorted(os.listdir(fd)):
            parts = (*above, name)
            shown = "/".join(parts)
            problem = name_problem(parts)
            if problem:
                raise Refused(f"{shown!r}: {problem}")
            found = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if len(entries) >= max_files:
                raise Refused(f"it made more than {max_files} files and folders")
            if stat.S_ISDIR(found.st_mode):
                flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
                inner = os.open(name, flags, dir_fd=fd)
                try:
                    entries.append(Entry(parts, None, False))
                    visit(inner, parts)
                finally:
                    os.close(inner)
            elif stat.S_ISREG(found.st_mode):
                if found.st_nlink > 1:
                    raise Refused(
                        f"{shown!r} is a hard link ({found.st_nlink} names of one file): "
                        "links are refused; copy the file instead"
                    )
                total += found.st_size
                if total > max_bytes:
                    raise Refused(f"what it built is larger than {max_bytes / _MiB:g} MiB")
                content = _read(fd, name, found, shown)
                entries.append(Entry(parts, content, bool(found.st_mode & 0o100)))
            else:
                kind = _KINDS.get(stat.S_IFMT(found.st_mode), "neither a file nor a folder")
                raise Refused(f"{shown!r} is {kind}: only files and folders are kept")

    try:
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
        root = os.open(folder, flags)
    except OSError as exc:
        raise Refused(
            f"its folder {folder} cannot be opened as a folder ({exc.strerror})"
        ) from None
    try:
        visit(root, ())
    except OSError as exc:
        raise Refused(f"what it left cannot be read ({exc})") from None
    finally:
        os.close(root)
    return entries


def _write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(1, view) :]


def _answer(verdict: dict[str, object]) -> int:
    _write_all(json.dumps(verdict).encode() + b"\n")
    return VERDICT


def main(argv: Sequence[str]) -> int:
    """``packer.py sandboxed|unsandboxed MAX_BYTES MAX_FILES SOURCES FOLDER BUILD_LINE``."""
    where, max_bytes, max_files, sources, folder, line = argv
    _write_all(STARTED)
    sandboxed = where == "sandboxed"
    problem = _protect(sandboxed)
    if problem:
        return _answer({"host": problem})
    # The build sees the environment the sandbox made (PATH and HOME): not the LC_CTYPE that
    # this interpreter sets for itself in the C locale (PEP 538).
    env = {name: value for name, value in os.environ.items() if name != "LC_CTYPE"}
    if not os.path.isdir(sources):
        return _answer({"host": f"the sources are not at {sources}"})
    os.umask(0o022)
    try:
        shutil.copytree(sources, folder, symlinks=True)
    except (OSError, shutil.Error) as exc:  # (sources checked by the referee: too many, say)
        return _answer({"refused": f"its files cannot be copied to {folder} ({exc})"[:500]})
    try:
        build = subprocess.Popen(
            ["/bin/sh", "-c", line],
            cwd=folder,
            stdin=subprocess.DEVNULL,
            stdout=2,
            stderr=2,
            close_fds=True,
            start_new_session=True,
            env=env,
        )
    except OSError as exc:
        return _answer({"host": f"cannot start the build ({exc})"})
    # From here on, whatever goes wrong is the build's doing: it is all that has changed.
    try:
        status = build.wait()
        stuck = _stop_the_rest(sandboxed)
        if stuck:
            return _answer({"refused": stuck})
        if status:
            return _answer({"failed": 128 - status if status < 0 else status})
        entries = walk(folder, int(max_bytes), int(max_files))
    except Refused as exc:
        return _answer({"refused": str(exc)})
    except Exception as exc:  # noqa: BLE001 — never the platform's once the build has run
        return _answer({"refused": f"the packer could not pack it ({type(exc).__name__}: {exc})"})
    _write_all(write_stream(entries))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
