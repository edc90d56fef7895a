"""What a build sends back is hostile: the referee's extractor takes plain files and folders by
clean names within the output caps, and turns every other stream (sparse members, links,
devices, extension headers, NULs, cut-short maps, huge sizes, any bytes at all) into a
:class:`BuildError`, never writing outside its folder; the build cache keeps to its size cap
by forgetting the builds used least recently, never one a seat holds."""

from __future__ import annotations

import fcntl
import io
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bots_sdk.builds import build, packer
from bots_sdk.builds.build import BuildError, BuildLimits
from bots_sdk.builds.languages import manifest_of_zip
from bots_sdk.builds.packer import BLOCK, Entry
from bots_sdk.sandbox import Bubblewrap, SandboxUnavailable
from tests.sandboxes import sandbox_problem

MiB = 1024 * 1024
LIMITS = BuildLimits(output_mb=1)


def _checksummed(block: bytearray) -> bytes:
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block)
    return bytes(block)


def _header(
    name: bytes,
    size: int = 0,
    kind: bytes = b"0",
    *,
    prefix: bytes = b"",
    link: bytes = b"",
    magic: bytes = b"ustar\x0000",
    size_field: bytes | None = None,
) -> bytes:
    """One ustar header block, checksum right, with whatever the fields say."""
    block = bytearray(BLOCK)
    block[0 : len(name)] = name[:100]
    block[100:108] = b"0000644\0"
    block[108:116] = block[116:124] = b"0000000\0"
    block[124:136] = size_field if size_field is not None else b"%011o\0" % size
    block[136:148] = b"%011o\0" % 0
    block[156:157] = kind
    block[157 : 157 + len(link)] = link[:100]
    block[257:265] = magic
    block[345 : 345 + len(prefix)] = prefix[:155]
    return _checksummed(block)


def _padded(content: bytes) -> bytes:
    return content + bytes(-len(content) % BLOCK)


def _pax(records: dict[bytes, bytes]) -> bytes:
    """A pax extended header (type ``x``) and its records."""
    body = b""
    for key, value in records.items():
        line = b" " + key + b"=" + value + b"\n"
        length = len(line) + 1
        while len(str(length).encode()) + len(line) != length:
            length += 1
        body += str(length).encode() + line
    return _header(b"././@PaxHeader", len(body), b"x") + _padded(body)


END = bytes(2 * BLOCK)
FILE = _header(b"bot", 3) + _padded(b"ELF")


def _tarfile(format: int, *members: tarfile.TarInfo, content: bytes = b"") -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=format) as archive:
        for info in members:
            archive.addfile(info, io.BytesIO(content) if info.isfile() else None)
    return out.getvalue()


def _info(
    name: str, kind: bytes = tarfile.REGTYPE, size: int = 0, link: str = ""
) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.linkname = kind, size, link
    return info


HOSTILE = {
    # the holes of the second red team: a sparse member, a cut-short map, a NUL in a pax path
    "a GNU sparse member": (
        _header(b"zeros", 0, b"S", size_field=b"%011o\0" % 512) + _padded(b"") + END,
        "a GNU sparse file",
    ),
    "a pax sparse map": (
        _pax(
            {
                b"GNU.sparse.major": b"1",
                b"GNU.sparse.minor": b"0",
                b"GNU.sparse.realsize": b"268435456",
            }
        )
        + _header(b"zeros", 512)
        + _padded(b"1\n0\n268435456\n")
        + END,
        "a pax extended header",
    ),
    "a pax sparse map cut short": (
        _pax({b"GNU.sparse.map": b"0,4096,1"}) + _header(b"zeros", 0),
        "a pax extended header",
    ),
    "a NUL in a pax path": (_pax({b"path": b"a\0b"}) + FILE + END, "a pax extended header"),
    "a pax global header": (_header(b"g", 0, b"g") + FILE + END, "a pax global header"),
    "a GNU long name": (
        _tarfile(tarfile.GNU_FORMAT, _info("x" * 200, size=1), content=b"x"),
        "a GNU long name",
    ),
    "a pax long name": (
        _tarfile(tarfile.PAX_FORMAT, _info("x" * 200, size=1), content=b"x"),
        "a pax extended header",
    ),
    "a symbolic link out": (
        _tarfile(tarfile.USTAR_FORMAT, _info("bot", tarfile.SYMTYPE, link="/etc/passwd")),
        "a symbolic link",
    ),
    "a hard link": (
        _tarfile(tarfile.USTAR_FORMAT, _info("bot", tarfile.LNKTYPE, link="/etc/passwd")),
        "a hard link",
    ),
    "a character device": (
        _tarfile(tarfile.USTAR_FORMAT, _info("null", tarfile.CHRTYPE)),
        "a character device",
    ),
    "a block device": (
        _tarfile(tarfile.USTAR_FORMAT, _info("sda", tarfile.BLKTYPE)),
        "a block device",
    ),
    "a FIFO": (_tarfile(tarfile.USTAR_FORMAT, _info("pipe", tarfile.FIFOTYPE)), "a FIFO"),
    "a contiguous file": (_header(b"bot", 0, b"7") + END, "a contiguous file"),
    "an unknown type": (_header(b"bot", 0, b"Z") + END, "an unknown type"),
    "GNU's magic": (_header(b"bot", 0, magic=b"ustar  \0") + END, "not POSIX ustar"),
    "an absolute name": (_header(b"/etc/owned", 1) + _padded(b"x") + END, "absolute"),
    "a '..' in a name": (_header(b"../escape", 1) + _padded(b"x") + END, "outside its folder"),
    "a '..' in the prefix": (
        _header(b"escape", 1, prefix=b"..") + _padded(b"x") + END,
        "outside its folder",
    ),
    "a '.' part": (_header(b"./bot", 1) + _padded(b"x") + END, "a name with an empty or '.' part"),
    "a NUL inside a name": (_header(b"a\0b", 1) + _padded(b"x") + END, "a NUL inside"),
    "a control character": (_header(b"a\nb", 1) + _padded(b"x") + END, "a control character"),
    "a name not UTF-8": (_header(b"\xff\xfe", 1) + _padded(b"x") + END, "not UTF-8"),
    "a link target named": (
        _header(b"bot", 0, link=b"/etc/passwd") + END,
        "names a link target",
    ),
    "a huge size": (_header(b"bot", 0, size_field=b"77777777777\0") + FILE + END, "more than"),
    "a size in base 256": (
        _header(b"bot", 0, size_field=b"\x80" + bytes(10) + b"\x01") + END,
        "not an octal number",
    ),
    "a size that is not a number": (
        _header(b"bot", 0, size_field=b"12x4\0" + bytes(7)) + END,
        "octal",
    ),
    "a wrong checksum": (FILE[:148] + b"0000000\0" + FILE[156:] + END, "wrong checksum"),
    "a name twice": (FILE + FILE + END, "in the stream twice"),
    "a file under a file": (
        FILE + _header(b"x", 1, prefix=b"bot") + _padded(b"x") + END,
        "comes under a file",
    ),
    "a file before its folder": (
        _header(b"x", 1, prefix=b"lib") + _padded(b"x") + END,
        "before its folder",
    ),
    "a folder with a size": (_header(b"lib", 1, b"5") + _padded(b"x") + END, "has a size"),
    "cut short in a file": (FILE[:700], "in the middle of"),
    "cut short before the end": (FILE, "before its end marker"),
    "one empty block at the end": (FILE + bytes(BLOCK), "one empty block"),
    "bytes after the end": (FILE + END + b"tail", "after the stream's end marker"),
    "bytes after a file's content": (
        _header(b"bot", 3) + b"ELFjunk" + bytes(505) + END,
        "after the content",
    ),
    "nothing at all": (b"", "before its end marker"),
    "a plain zip": (b"PK\x03\x04" + bytes(600), "checksum"),
}


@pytest.mark.parametrize(("stream", "words"), list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_stream_the_packer_does_not_write_is_refused_saying_why_and_nothing_is_written(
    tmp_path: Path, stream: bytes, words: str
) -> None:
    with pytest.raises(BuildError) as refused:
        build._extract(stream, tmp_path / "out", LIMITS)
    assert refused.value.reason.startswith("the build's output is refused: "), refused.value.reason
    assert words in refused.value.reason
    assert list(tmp_path.iterdir()) == []


def test_the_output_caps_count_bytes_and_names_before_anything_is_written(tmp_path: Path) -> None:
    many = [Entry((f"f{n}",), b"", False) for n in range(build.MAX_BUILT_FILES + 1)]
    with pytest.raises(BuildError, match=f"more than {build.MAX_BUILT_FILES} files and folders"):
        build._extract(packer.write_stream(many), tmp_path / "many", LIMITS)
    big = [Entry(("a",), bytes(MiB // 2), False), Entry(("b",), bytes(MiB // 2 + 1), False)]
    with pytest.raises(BuildError, match=f"more than {MiB} bytes of files"):
        build._extract(packer.write_stream(big), tmp_path / "big", LIMITS)
    assert list(tmp_path.iterdir()) == []
    fits = [Entry(("a",), bytes(MiB // 2), False), Entry(("b",), bytes(MiB // 2), True)]
    build._extract(packer.write_stream(fits), tmp_path / "fits", LIMITS)
    assert sorted(p.name for p in (tmp_path / "fits").iterdir()) == ["a", "b"]
    assert (tmp_path / "fits" / "b").stat().st_mode & 0o777 == 0o755


def test_what_the_packer_writes_is_unpacked_as_it_was(tmp_path: Path) -> None:
    entries = [
        Entry(("bin",), None, False),
        Entry(("bin", "bot"), b"\x7fELF" + bytes(600), True),
        Entry(("classes",), None, False),
        Entry(("classes", "Main$1.class"), b"cafe", False),
        Entry(("x" * 100,), b"", False),
        Entry((*("d" * 9 for _ in range(15)), "e"), None, False),
    ]
    stream = packer.write_stream(
        [*entries[:5], *(Entry(("d" * 9,) * n, None, False) for n in range(1, 16)), entries[5]]
    )
    build._extract(stream, tmp_path / "out", LIMITS)
    out = tmp_path / "out"
    assert (out / "bin" / "bot").read_bytes() == b"\x7fELF" + bytes(600)
    assert (out / "bin" / "bot").stat().st_mode & 0o777 == 0o755
    assert (out / "classes" / "Main$1.class").stat().st_mode & 0o777 == 0o644
    assert (out / ("x" * 100)).read_bytes() == b""
    assert (out.joinpath(*entries[5].parts)).is_dir()


# --- fuzzing: any stream at all is a bounded tree or a BuildError ------------------------


def _unpacked(stream: bytes, tmp: Path) -> None:
    """Extract ``stream`` in a fresh folder of ``tmp``: a BuildError, or a tree of plain files
    and folders within the caps; nothing else, and nothing beside it."""
    place = Path(os.path.realpath(tmp)) / f"case-{time.monotonic_ns()}"
    place.mkdir()
    into = place / "out"
    try:
        build._extract(stream, into, LIMITS)
    except BuildError as exc:
        assert exc.reason.startswith("the build's output is refused: ")
        assert list(place.iterdir()) == [], "a refused stream wrote something"
        return
    assert [p.name for p in place.iterdir()] == ["out"], "written beside its folder"
    files, total = 0, 0
    for above, folders, names in os.walk(into):
        for name in folders + names:
            found = os.lstat(os.path.join(above, name))
            assert os.path.realpath(os.path.join(above, name)).startswith(str(into) + "/")
            assert found.st_mode & 0o170000 in (0o040000, 0o100000), "neither file nor folder"
            files += 1
            if name in names:
                total += found.st_size
    assert files <= build.MAX_BUILT_FILES and total <= LIMITS.output_mb * MiB


FUZZ = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)


@FUZZ
@given(data=st.binary(max_size=3 * BLOCK))
def test_any_bytes_are_a_bounded_tree_or_a_build_error(tmp_path: Path, data: bytes) -> None:
    _unpacked(data, tmp_path)


_NAMES = st.text(alphabet="ab./\0\n\\é", min_size=1, max_size=6)
_ENTRIES = st.lists(
    st.tuples(
        st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3), st.binary(max_size=700)
    ),
    max_size=5,
)
#: Header fields a mutation rewrites (offset, length), and values worth trying there.
_FIELDS = {
    "name": (0, 100),
    "mode": (100, 8),
    "size": (124, 12),
    "type": (156, 1),
    "link": (157, 100),
    "magic": (257, 8),
    "prefix": (345, 155),
}
_VALUES = st.one_of(
    st.sampled_from(
        [
            b"S",
            b"x",
            b"g",
            b"L",
            b"K",
            b"1",
            b"2",
            b"3",
            b"6",
            b"5",
            b"77777777777\0",
            b"\x80\0\0\0\0\0\0\0\0\0\0\x10",
            b"00000001000\0",
            b"ustar  \0",
            b"..",
            b"/",
            b"/etc/passwd",
            b"a\0b",
            b"\xff",
            b"x" * 100,
        ]
    ),
    st.binary(min_size=1, max_size=12),
)
_MUTATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("field"), st.integers(0, 12), st.sampled_from(sorted(_FIELDS)), _VALUES),
        st.tuples(st.just("byte"), st.integers(0, 8000), st.integers(0, 255), st.booleans()),
        st.tuples(st.just("cut"), st.integers(0, 8000), st.just(0), st.just(False)),
        st.tuples(
            st.just("insert"),
            st.integers(0, 12),
            st.sampled_from(sorted(HOSTILE)),
            st.just(False),
        ),
    ),
    min_size=1,
    max_size=4,
)


def _stream_of(entries: list[tuple[list[str], bytes]]) -> bytes:
    out, seen = [], set()
    for parts, content in entries:
        for depth in range(1, len(parts)):
            folder = tuple(parts[:depth])
            if folder not in seen:
                seen.add(folder)
                out.append(Entry(folder, None, False))
        if tuple(parts) not in seen:
            seen.add(tuple(parts))
            out.append(Entry(tuple(parts), content, bool(len(content) % 2)))
    # (a file where a later name needs a folder is left in: the referee must refuse it)
    return packer.write_stream(out)


def _mutated(stream: bytes, mutations: list[tuple[str, int, object, object]]) -> bytes:
    data = bytearray(stream)
    for how, at, what, flag in mutations:
        if how == "field" and data:
            start = (at % max(len(data) // BLOCK, 1)) * BLOCK
            offset, length = _FIELDS[str(what)]
            block = bytearray(data[start : start + BLOCK].ljust(BLOCK, b"\0"))
            assert isinstance(flag, bytes)
            block[offset : offset + length] = flag[:length].ljust(length, b"\0")
            data[start : start + BLOCK] = _checksummed(block)
        elif how == "byte" and data:
            data[at % len(data)] = int(str(what))
            if flag:  # the checksum made right again, so that the fields themselves are read
                start = (at % len(data)) // BLOCK * BLOCK
                block = bytearray(data[start : start + BLOCK].ljust(BLOCK, b"\0"))
                data[start : start + BLOCK] = _checksummed(block)
        elif how == "cut":
            del data[at % (len(data) + 1) :]
        elif how == "insert":
            start = (at % (len(data) // BLOCK + 1)) * BLOCK
            hostile = HOSTILE[str(what)][0]
            data[start:start] = hostile[: len(hostile) - len(hostile) % BLOCK]
    return bytes(data)


@FUZZ
@given(entries=_ENTRIES, mutations=_MUTATIONS)
def test_mutated_packer_streams_are_a_bounded_tree_or_a_build_error(
    tmp_path: Path,
    entries: list[tuple[list[str], bytes]],
    mutations: list[tuple[str, int, object, object]],
) -> None:
    _unpacked(_mutated(_stream_of(entries), mutations), tmp_path)


@FUZZ
@given(
    names=st.lists(_NAMES, min_size=1, max_size=4),
    kind=st.sampled_from(
        [tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.GNUTYPE_SPARSE]
    ),
    format=st.sampled_from([tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT]),
    cut=st.integers(0, 4000),
)
def test_streams_of_other_tar_writers_are_a_bounded_tree_or_a_build_error(
    tmp_path: Path, names: list[str], kind: bytes, format: int, cut: int
) -> None:
    out = io.BytesIO()
    try:
        with tarfile.open(fileobj=out, mode="w", format=format) as archive:
            for name in names:
                info = tarfile.TarInfo(name)
                info.type = kind
                info.size = 5 if kind == tarfile.REGTYPE else 0
                archive.addfile(info, io.BytesIO(b"hello") if info.size else None)
    except ValueError:  # (a name this writer cannot write)
        return
    stream = out.getvalue()
    _unpacked(stream, tmp_path)
    _unpacked(stream[:cut], tmp_path)


# --- the packer on its own ---------------------------------------------------------------


def _pack(tmp_path: Path, line: str) -> subprocess.CompletedProcess[bytes]:
    sources = tmp_path / "src"
    sources.mkdir(exist_ok=True)
    (sources / "main.c").write_text("int main(void) { return 0; }\n")
    folder = tmp_path / "build"
    argv = [sys.executable, "-I", "-S", str(build.PACKER), "unsandboxed", str(MiB), "10"]
    done = subprocess.run(
        [*argv, str(sources), str(folder), line], capture_output=True, timeout=120, check=False
    )
    assert done.stdout.startswith(packer.STARTED), done  # (its first word, always)
    done.stdout = done.stdout[len(packer.STARTED) :]
    return done


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("ln -s /etc/passwd bot", "'bot' is a symbolic link"),
        ("ln main.c bot", "'bot' is a hard link (2 names of one file)"),
        ("mkfifo bot", "'bot' is a FIFO"),
        ("truncate -s 1G zeros", "larger than 1 MiB"),
        ("for n in $(seq 10); do : > f$n; done", "more than 10 files and folders"),
        ("mkdir -p a/b && touch \"a/b/$(printf 'x\\ty')\"", "a control character in a name"),
    ],
    ids=["symlink", "hard link", "fifo", "sparse", "too many", "a tab in a name"],
)
def test_the_packer_refuses_what_the_stream_cannot_carry(
    tmp_path: Path, line: str, words: str
) -> None:
    done = _pack(tmp_path, line)
    assert done.returncode == packer.VERDICT, done
    assert words in json.loads(done.stdout)["refused"]


def test_the_packer_stops_what_the_build_left_running_then_packs(tmp_path: Path) -> None:
    left = "(setsid sh -c 'echo $$ > ../left.pid; exec sleep 300' &)"
    done = _pack(tmp_path, f"{left}; until [ -s ../left.pid ]; do :; done; echo built > bot")
    assert done.returncode == 0, done
    members = packer.read_stream(done.stdout, MiB, 10)
    assert [m.name for m in members] == ["bot", "main.c"]
    pid = int((tmp_path / "left.pid").read_text())
    assert not Path(f"/proc/{pid}").exists(), "what the build left running survived it"


def test_a_failing_build_line_is_the_packers_verdict(tmp_path: Path) -> None:
    done = _pack(tmp_path, "echo no >&2; exit 3")
    assert (done.returncode, json.loads(done.stdout), done.stderr) == (
        packer.VERDICT,
        {"failed": 3},
        b"no\n",
    )


# --- the build cache: a size cap, least recently used first, never one in use ----------


def _entry(root: Path, key: str, size: int, used: float) -> None:
    entry = root / key
    (entry / "bot").mkdir(parents=True)
    (entry / "bot" / "blob").write_bytes(bytes(size))
    (entry / "build.log").write_text("")
    (entry / "build.json").write_text(json.dumps({"seconds": 0.1, "bytes": size}))
    (entry / "used").touch()
    os.utime(entry / "used", (used, used))


def test_the_cache_forgets_the_least_recently_used_builds_past_its_cap(tmp_path: Path) -> None:
    keys = [f"{n:064x}" for n in range(4)]
    for n, key in enumerate(keys):
        _entry(tmp_path, key, MiB, 1_000_000 + n)
    assert build.evict(tmp_path, 4 * MiB) == []
    assert build.evict(tmp_path, 2 * MiB) == keys[:2]
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == keys[2:]
    assert not any(p.name.endswith(".lock") for p in tmp_path.iterdir())


def test_the_cache_never_forgets_a_build_a_seat_holds(tmp_path: Path) -> None:
    keys = [f"{n:064x}" for n in range(3)]
    for n, key in enumerate(keys):
        _entry(tmp_path, key, MiB, 1_000_000 + n)
    # the oldest is held by another process, as a seat of another referee on this host holds it
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); "
            "fcntl.flock(fd, fcntl.LOCK_SH); print('held', flush=True); sys.stdin.read()",
            str(tmp_path / f"{keys[0]}.lock"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        assert build.evict(tmp_path, 2 * MiB) == [keys[1]]  # the oldest is in use: it stays
        assert (tmp_path / keys[0] / "bot" / "blob").is_file()
        assert build.evict(tmp_path, 0) == [keys[2]]  # over the cap, rather than forget it
        assert (tmp_path / keys[0] / "bot" / "blob").is_file()
    finally:
        holder.communicate("", timeout=30)
    assert holder.returncode == 0
    assert build.evict(tmp_path, 0) == [keys[0]]  # let go: now it may go
    assert list(tmp_path.iterdir()) == []


def test_a_lease_holds_its_build_until_released(tmp_path: Path) -> None:
    key = f"{7:064x}"
    _entry(tmp_path, key, MiB, 1_000_000)
    fd = build._take(tmp_path, key, fcntl.LOCK_SH)
    lease = build.Lease(fd)
    assert build.evict(tmp_path, 0) == []
    lease.release()
    lease.release()  # (twice is harmless)
    assert build.evict(tmp_path, 0) == [key]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("setting", ["0", "-1", "1.5", "lots", "\u0663"])
def test_a_cache_cap_that_is_not_a_size_is_refused_loudly(
    monkeypatch: pytest.MonkeyPatch, setting: str
) -> None:
    monkeypatch.setenv("BIDEL_BUILD_CACHE_MB", setting)
    with pytest.raises(SandboxUnavailable, match="BIDEL_BUILD_CACHE_MB must be a whole number"):
        build.cache_cap()


@pytest.mark.skipif(
    bool(sandbox_problem("bubblewrap")) or bool(build.toolchain("cpp").missing),
    reason="real builds need the bubblewrap sandbox and the C++ toolchain",
)
def test_real_builds_past_the_cap_forget_the_oldest_unused_and_keep_the_one_in_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("BIDEL_BUILD_CACHE", str(cache))
    monkeypatch.setenv("BIDEL_BUILD_CACHE_MB", "1")

    def code(name: str) -> bytes:  # a build of 400 kB: three do not fit in 1 MiB
        folder = tmp_path / name
        folder.mkdir(exist_ok=True)
        line = f"head -c 400000 /dev/urandom > bot && echo {name} > name"
        (folder / "bidel.toml").write_text(f'language = "cpp"\nbuild = "{line}"\nrun = "./bot"\n')
        (folder / "main.cpp").write_text(f"// {name}\n")
        return build.pack(folder)

    def made(name: str) -> build.Built:
        data = code(name)
        return build.built(data, manifest_of_zip(data), Bubblewrap())

    held = made("held")  # a seat runs it for the whole test
    made("old").lease.release()  # type: ignore[union-attr]
    newer = made("newer")  # the cache is over its cap now: "old" goes, "held" stays
    assert (held.folder / "name").read_text() == "held\n"
    assert sorted(
        (p / "bot" / "name").read_text() for p in cache.iterdir() if build._is_key(p.name)
    ) == [
        "held\n",
        "newer\n",
    ]
    again = made("old")  # built again when it is next played
    assert not again.cached and (again.folder / "name").read_text() == "old\n"
    assert (held.folder / "name").is_file(), "the build in use was forgotten"
    newer.lease.release()  # type: ignore[union-attr]
    held.lease.release()  # type: ignore[union-attr]
    last = made("last")  # "held" is the least recently used, and free now: it goes
    kept = sorted(
        (p / "bot" / "name").read_text() for p in cache.iterdir() if build._is_key(p.name)
    )
    assert kept == ["last\n", "old\n"] and not held.folder.exists()
    last.lease.release()  # type: ignore[union-attr]
    again.lease.release()  # type: ignore[union-attr]
