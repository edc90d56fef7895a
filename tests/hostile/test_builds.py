"""Hostile builds, run for real in the build's sandbox: a build line that reaches for the
process packing its output (its memory, its stream, its environment) is refused; a build that
leaves a sparse file, a huge file, too many files, a link out, a FIFO or a socket is refused by
the packer; a stream no packer writes (sparse members, a cut-short sparse map, a NUL in a pax
path) is refused by the referee. Each is the seat's ``crash`` fault "could not be built", and
a built bot at the same table plays the match to the end."""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
import zipfile
from pathlib import Path

import pytest

import bots_sdk
from bots_sdk.builds import build, packer
from bots_sdk.builds.languages import manifest_of
from bots_sdk.referee.runner import GameResult, TimeControl, run_match
from bots_sdk.sandbox import Bubblewrap, BuildJob, BuiltBot, Launch, SandboxUnavailable, Unsandboxed
from engine.record import verify
from tests.bots_sdk import test_build as streams
from tests.sandboxes import left_behind, sandbox_problem

KIT = Path(bots_sdk.__file__).parent / "kits" / "cpp"  # (the package's: no checkout in an image)
BUILDS = Path(__file__).parent / "builds"
CLOCK = TimeControl(1.0, 10.0)

pytestmark = [
    pytest.mark.skipif(
        bool(sandbox_problem("bubblewrap")),
        reason=f"no bubblewrap sandbox here: {sandbox_problem('bubblewrap')}",
    ),
    pytest.mark.skipif(
        bool(build.toolchain("cpp").missing),
        reason=f"{', '.join(build.toolchain('cpp').missing)} not installed here",
    ),
]


@pytest.fixture(autouse=True)
def build_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One build cache for the module: the kit at the next seat is built once."""
    folder = tmp_path_factory.getbasetemp() / "hostile-build-cache"
    monkeypatch.setenv("BIDEL_BUILD_CACHE", str(folder))
    monkeypatch.setenv("BIDEL_SANDBOX", "bubblewrap")
    return folder


def _bot(tmp_path: Path, build_line: str) -> Path:
    """The C++ kit with another build line, zipped as an author uploads it, with the hostile
    build steps beside its code."""
    folder = tmp_path / "hostile"
    shutil.copytree(KIT, folder)
    escaped = build_line.replace("\\", "\\\\").replace('"', '\\"')
    (folder / "bidel.toml").write_text(f'language = "cpp"\nbuild = "{escaped}"\nrun = "./bot"\n')
    code = tmp_path / "hostile.zip"
    code.write_bytes(build.pack(folder))
    with zipfile.ZipFile(code, "a") as archive:
        for step in sorted(BUILDS.glob("*.py")):
            archive.write(step, step.name)
    return code


def _match(bot: str, *, launcher: Unsandboxed | None = None) -> GameResult:
    """``bot`` at seat 0, the kit (built in the sandbox) at seat 1: one hand, checked."""
    result = run_match(
        "standard", 5, [bot, str(KIT), "low", "low"], hands=1, time_control=CLOCK, launcher=launcher
    )
    game = result.games[0]
    assert verify(game.record)["valid"], "the match must end with a valid record"
    kit = game.seats[1]
    assert kit.faults == [] and not kit.replaced and "built (cpp)" in kit.stderr, kit
    assert all(seat.faults == [] for seat in game.seats[1:])
    assert left_behind("bubblewrap") == [], "a process of a build or a bot survived the match"
    cache = build.cache_root()
    for key in _cached(cache):  # every seat let go of its build: each may be forgotten now
        fd = build._take(cache, key, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert fd is not None, f"a seat still holds the build {key}"
        os.close(fd)
    return game


def _could_not_be_built(game: GameResult) -> str:
    seat = game.seats[0]
    assert [fault["class"] for fault in seat.faults] == ["crash"], seat.faults
    assert seat.faults[0]["detail"] == "the bot could not be built"  # (in public)
    detail = str(seat.faults[0]["said"])  # (its owner's: the build's errors)
    assert detail.startswith("the bot could not be built: "), detail
    assert seat.replaced, "the fallback plays the seat's hand"
    return detail


def _kit_key() -> str:
    return build.cache_key(
        build.pack(KIT), manifest_of(KIT).to_dict(), build.toolchain("cpp").versions
    )


def _cached(cache: Path) -> list[str]:
    if not cache.is_dir():
        return []
    return sorted(p.name for p in cache.iterdir() if build._is_key(p.name))


def test_a_build_that_reaches_for_the_packer_is_refused_every_way(
    tmp_path: Path, build_cache: Path
) -> None:
    line = "python3 reach_the_packer.py $PPID 1 && g++ -std=c++17 -O2 -o bot main.cpp"
    before = _cached(build_cache)
    game = _match(str(_bot(tmp_path, line)))
    detail = _could_not_be_built(game)
    assert "the build failed (status 1): every reach for the packer was refused" in detail
    log = game.seats[0].stderr
    assert "REACHED" not in log, log
    for path in ("/proc/1/mem", "/proc/1/fd/1", "/proc/1/environ"):
        assert f"refused: {path}: Permission denied" in log, log
    assert "refused: ptrace 1: Operation not permitted" in log, log
    assert set(_cached(build_cache)) <= {*before, _kit_key()}  # the kit's build at most


def test_the_same_reach_gets_through_to_a_packer_left_dumpable(
    tmp_path: Path, build_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: the probe is real. A packer that skips PR_SET_DUMPABLE is open to its
    build (same uid), so the build script reaches it and goes on to build the bot."""
    text = build.PACKER.read_text()
    for call in (
        "libc.prctl(pr_set_dumpable, 0, 0, 0, 0)",
        "libc.prctl(pr_get_dumpable, 0, 0, 0, 0)",
    ):
        assert text.count(call) == 1
        text = text.replace(call, "0")
    careless = tmp_path / "careless_packer.py"
    careless.write_text(text)
    monkeypatch.setattr(build, "PACKER", careless)
    line = "python3 reach_the_packer.py $PPID 1 && g++ -std=c++17 -O2 -o bot main.cpp"
    seat = _match(str(_bot(tmp_path, line))).seats[0]
    assert seat.faults == [] and "built (cpp)" in seat.stderr, seat
    # (its /proc/1/fd/1 stays closed to the build either way here: the stream's pipe is the
    # referee's, root's, mode 0600)
    for path in ("/proc/1/mem", "/proc/1/environ"):
        assert f"REACHED: {path}" in seat.stderr, seat.stderr


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("truncate -s 100M bot", "what it built is larger than 64 MiB"),
        ("head -c 70000000 /dev/zero > bot", "what it built is larger than 64 MiB"),
        ("mkdir many && cd many && seq 2001 | xargs touch", "more than 2000 files and folders"),
        ("ln -s /etc/passwd bot", "'bot' is a symbolic link: only files and folders are kept"),
        ("ln -s .. up", "'up' is a symbolic link"),
        ("ln main.cpp bot", "'bot' is a hard link"),
        ("mkfifo bot", "'bot' is a FIFO"),
        (
            "python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"bot\")'",
            "'bot' is a socket",
        ),
        ("touch \"$(printf 'a\\033b')\"", "a control character in a name"),
        ("touch $(head -c 101 /dev/zero | tr '\\0' x)", "a name longer than 100 bytes"),
        ("mkdir -p shut/in && chmod 000 shut", "what it left cannot be read"),
    ],
    ids=[
        "sparse",
        "huge",
        "too many files",
        "a symlink out",
        "a symlink up",
        "a hard link",
        "a fifo",
        "a socket",
        "an escape in a name",
        "an over-long name",
        "a folder shut to its packer",
    ],
)
def test_a_build_whose_output_is_refused_is_a_crash_fault_and_the_table_plays_on(
    tmp_path: Path, build_cache: Path, line: str, words: str
) -> None:
    before = _cached(build_cache)
    detail = _could_not_be_built(_match(str(_bot(tmp_path, line))))
    assert "the build's output is refused: " in detail and words in detail, detail
    assert set(_cached(build_cache)) <= {*before, _kit_key()}  # nothing of it is kept


def test_what_a_build_leaves_running_is_stopped_before_its_folder_is_packed(
    tmp_path: Path, build_cache: Path
) -> None:
    # (its stderr still open: the log does not end until the packer has stopped it)
    late = "(setsid sh -c 'sleep 300; ln -s /etc/passwd late' &)"
    game = _match(str(_bot(tmp_path, f"{late}; g++ -std=c++17 -O2 -o bot main.cpp")))
    seat = game.seats[0]
    assert seat.faults == [] and "built (cpp)" in seat.stderr, seat
    folders = [build_cache / key / "bot" for key in _cached(build_cache)]
    assert all((folder / "bot").is_file() for folder in folders)
    assert not any((folder / "late").exists() for folder in folders)


class ForgedStream(Unsandboxed):
    """A build whose packer was subverted: whatever runs it sends back ``stream`` and exits 0,
    so that the referee's own reading of it is what stands."""

    def __init__(self, stream: bytes, where: Path) -> None:
        super().__init__()
        self.where = where
        where.write_bytes(packer.STARTED + stream)

    def build_launch(self, job: BuildJob) -> Launch:
        send = "import sys; sys.stdout.buffer.write(open(sys.argv[1], 'rb').read())"
        return Launch([sys.executable, "-I", "-S", "-c", send, str(self.where)], {})

    def launch(self, bot: Path | BuiltBot, seat: int) -> Launch:  # the kit: in the real sandbox
        return Bubblewrap().launch(bot, seat)


@pytest.mark.parametrize(
    ("case", "words"),
    [
        ("a GNU sparse member", "is a GNU sparse file: only files and folders are taken"),
        ("a pax sparse map", "is a pax extended header"),
        ("a pax sparse map cut short", "is a pax extended header"),
        ("a NUL in a pax path", "is a pax extended header"),
        ("a huge size", "more than 67108864 bytes of files"),
        ("cut short in a file", "the stream ends in the middle of 'bot' (cut short?)"),
        ("a plain zip", "the checksum of 'PK\\x03\\x04' (the header at 0) is not an octal number"),
    ],
    ids=lambda value: value if value in streams.HOSTILE else "",
)
def test_a_stream_no_packer_writes_is_the_seats_crash_fault_never_the_platforms(
    tmp_path: Path, build_cache: Path, case: str, words: str
) -> None:
    build.prepare(KIT, Bubblewrap()).lease.release()  # (the kit's real build, cached first)
    forged = ForgedStream(streams.HOSTILE[case][0], tmp_path / "stream")
    source = tmp_path / "src"
    shutil.copytree(KIT, source)
    (source / "main.cpp").write_text((KIT / "main.cpp").read_text() + f"// {case}\n")
    detail = _could_not_be_built(_match(str(source), launcher=forged))
    assert "the build's output is refused: " in detail and words in detail, detail
    assert not any(p.name.startswith(".tmp-") for p in build_cache.iterdir())


class NoPacker(Unsandboxed):
    """A sandbox that fails before its packer starts (bubblewrap's own error, say)."""

    def __init__(self, argv: list[str]) -> None:
        super().__init__()
        self.argv = argv

    def build_launch(self, job: BuildJob) -> Launch:
        return Launch(self.argv, {})


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["/bin/sh", "-c", "echo 'bwrap: Can not mount tmpfs' >&2; exit 1"], "(status 1): bwrap"),
        (["/bin/sh", "-c", "echo '{\"failed\": 1}'; exit 97"], "(status 97)"),
        ([sys.executable, "-c", "import os; os.kill(os.getpid(), 9)"], "(status -9)"),
    ],
    ids=["bubblewrap fails", "a verdict not from the packer", "killed before it starts"],
)
def test_a_sandbox_that_never_starts_the_packer_is_the_hosts_failure_not_the_bots(
    tmp_path: Path, argv: list[str], words: str
) -> None:
    source = tmp_path / "src"
    shutil.copytree(KIT, source)
    (source / "main.cpp").write_text((KIT / "main.cpp").read_text() + f"// {argv}\n")
    with pytest.raises(
        SandboxUnavailable, match="the build's sandbox did not start its packer"
    ) as failed:
        build.prepare(source, NoPacker(argv))
    assert words in str(failed.value)
