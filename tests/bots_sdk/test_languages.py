"""Bots in other languages: the starter kits build in the sandbox and play exactly as `low`;
a build that fails, loops, floods or reaches for the network is stopped and says why; a C
bot that forks, allocates or opens a socket is held by the same walls as a Python one."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from bots_sdk.builds import build
from bots_sdk.builds.build import BUILD_SIZES, BuildError, BuildLimits, built, pack
from bots_sdk.builds.languages import (
    LANGUAGES,
    Manifest,
    ManifestError,
    manifest_of,
    manifest_of_zip,
)
from bots_sdk.referee.runner import TimeControl, run_match
from bots_sdk.sandbox import Bubblewrap, BuildJob, Namespaces, SandboxUnavailable
from engine.record import verify
from tests.sandboxes import left_behind, sandbox_problem

PROJECT = Path(__file__).resolve().parents[2]
KITS = PROJECT / "kits"
HOSTILE_C = PROJECT / "tests" / "hostile" / "c" / "hostile.c"

needs_sandbox = pytest.mark.skipif(
    bool(sandbox_problem("bubblewrap")),
    reason=f"no bubblewrap sandbox here: {sandbox_problem('bubblewrap')}",
)


def _missing(language: str) -> str:
    tools = build.toolchain(language)
    return f"{', '.join(tools.missing)} not installed here" if tools.missing else ""


@pytest.fixture(autouse=True)
def build_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One build cache for the module (each kit is built once, for real, in the sandbox)."""
    folder = tmp_path_factory.getbasetemp() / "build-cache"
    monkeypatch.setenv("BIDEL_BUILD_CACHE", str(folder))
    monkeypatch.setenv("BIDEL_SANDBOX", "bubblewrap")
    return folder


def _kit(language: str) -> Path:
    problem = _missing(language)
    if problem:
        pytest.skip(f"the {language} kit cannot be built here: {problem}")
    return KITS / language


# --- manifests ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "words"),
    [
        ("bidel.toml", 'language = "cobol"', "not one of python, cpp, rust, java, javascript"),
        ("bidel.toml", 'language = "cpp"\nrun = ""', "run is empty"),
        ("bidel.toml", 'language = "cpp"\nrn = "./bot"', "unknown key(s) 'rn'"),
        ("bidel.toml", "language = 3", "language must be a string, not int"),
        ("bidel.toml", "language = ", "cannot be read"),
        ("bot.json", "[1]", "must hold a table of keys, not list"),
        ("bot.json", '{"language": "python", "run": "python3 bot.py"}', "leave out build and run"),
        ("bidel.toml", 'language = "rust"\nrun = "\'./bot"', "cannot be split into words"),
        ("bidel.toml", "language = " + '"' + "x" * 5000 + '"', "the limit is 4096"),
    ],
)
def test_a_bad_manifest_is_refused_naming_the_file_and_the_fault(
    name: str, text: str, words: str
) -> None:
    with pytest.raises(ManifestError) as refused:
        Manifest.parse(name, text.encode())
    assert str(refused.value).startswith(name) and words in str(refused.value)


def test_every_language_has_defaults_and_a_kit_with_its_manifest() -> None:
    for language, spec in LANGUAGES.items():
        if language == "python":
            continue
        manifest = manifest_of(KITS / language)
        assert manifest.language == language and manifest.run, language
        assert (KITS / language / "README.md").is_file(), language
        assert Manifest.parse("bidel.toml", f'language = "{language}"'.encode()).run == (
            spec.run.split()
        )


def test_pack_keeps_the_sources_and_leaves_build_outputs_out(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    (folder / "src").mkdir(parents=True)
    (folder / "bidel.toml").write_text('language = "rust"\n')
    (folder / "src" / "main.rs").write_text("fn main() {}\n")
    (folder / "target" / "release").mkdir(parents=True)
    (folder / "target" / "release" / "bot").write_bytes(b"\x7fELF" + bytes(1000))
    (folder / "bot").write_bytes(b"\x7fELF")
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref")
    data = pack(folder)
    assert zipfile.ZipFile(io.BytesIO(data)).namelist() == ["bidel.toml", "src/main.rs"]
    assert pack(folder) == data  # the same folder, the same bytes (and the same cached build)


# --- the kits -----------------------------------------------------------------------------


@needs_sandbox
@pytest.mark.parametrize("language", ["cpp", "rust", "java", "javascript"])
def test_a_starter_kit_builds_in_the_sandbox_and_plays_move_for_move_as_low(
    language: str,
) -> None:
    kit = _kit(language)
    clock = TimeControl(1.0, 10.0)
    for rules in ("standard", "hokm_40", "moon_choice"):
        theirs = run_match(rules, 11, [str(kit), "low", "low", "low"], hands=2, time_control=clock)
        ours = run_match(rules, 11, ["low", "low", "low", "low"], hands=2, time_control=clock)
        seat = theirs.games[0].seats[0]
        assert seat.faults == [] and not seat.replaced, (rules, seat.faults, seat.stderr)
        assert f"built ({language})" in seat.stderr
        assert verify(theirs.games[0].record)["valid"]
        assert theirs.games[0].record == ours.games[0].record, rules  # every decision
    assert left_behind("bubblewrap") == []


def _cli(*args: str, cwd: Path = PROJECT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bots_sdk", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
    )


@needs_sandbox
@pytest.mark.parametrize("language", ["cpp", "rust", "java", "javascript"])
def test_bidel_new_writes_the_kit_and_check_and_pack_take_it(language: str, tmp_path: Path) -> None:
    _kit(language)
    made = _cli("new", "--lang", language, "my_bot", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert manifest_of(tmp_path / "my_bot").language == language
    checked = _cli("check", "my_bot", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "all 7 scenarios passed" in checked.stdout
    packed = _cli("pack", "my_bot", cwd=tmp_path)
    assert packed.returncode == 0, packed.stderr
    names = zipfile.ZipFile(tmp_path / "my_bot.zip").namelist()
    assert "bidel.toml" in names and "README.md" in names
    assert _cli("new", "--lang", language, "my_bot", cwd=tmp_path).returncode == 2  # exists


@needs_sandbox
def test_play_says_what_was_built(tmp_path: Path) -> None:
    kit = _kit("cpp")
    played = _cli("play", str(kit), "low", "low", "low", "--hands", "2")
    assert played.returncode == 0, played.stderr
    assert str(kit) in played.stdout


# --- builds that fail, loop, flood or reach out --------------------------------------------


def _folder(
    tmp_path: Path, build_line: str, source: str = "int main() { return 0; }\n", name: str = "bot"
) -> bytes:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "bidel.toml").write_text(f'language = "cpp"\nbuild = "{build_line}"\n')
    (folder / "main.cpp").write_text(source)
    return pack(folder)


def _build(code: bytes, limits: BuildLimits | None = None) -> build.Built:
    return built(code, manifest_of_zip(code), Bubblewrap(), limits)


@needs_sandbox
def test_a_compile_error_is_a_failed_build_with_the_compilers_words(tmp_path: Path) -> None:
    _kit("cpp")
    code = _folder(tmp_path, "g++ -o bot main.cpp", "int main() { return undeclared_name; }\n")
    with pytest.raises(BuildError) as failed:
        _build(code)
    assert "the build failed (status 1)" in failed.value.reason
    assert "'undeclared_name' was not declared in this scope" in failed.value.log


@needs_sandbox
@pytest.mark.parametrize(
    ("build_line", "limits", "words"),
    [
        (
            "while :; do :; done",
            BuildLimits(sizes=replace(BUILD_SIZES, cpu_seconds=2)),
            "stopped at a limit (CPU 2 s",
        ),
        ("sleep 600", BuildLimits(wall_seconds=2), "wall-clock limit (2 s)"),
        (
            "yes flooding",
            BuildLimits(sizes=replace(BUILD_SIZES, cpu_seconds=2), log_bytes=4096),
            "stopped at a limit",
        ),
        ("head -c 20000000 /dev/urandom > big", BuildLimits(output_mb=8), "larger than 8 MiB"),
        (
            "head -c 100000000 /dev/zero > big",
            BuildLimits(sizes=replace(BUILD_SIZES, tmp_mb=32)),
            "the build failed",
        ),
    ],
    ids=["loops", "sleeps", "floods its log", "returns too much", "fills its folder"],
)
def test_a_build_past_a_limit_is_stopped_saying_which(
    tmp_path: Path, build_line: str, limits: BuildLimits, words: str
) -> None:
    _kit("cpp")
    with pytest.raises(BuildError) as stopped:
        _build(_folder(tmp_path, build_line), limits)
    assert words in stopped.value.reason
    log = stopped.value.log
    if build_line.startswith("yes"):  # the first bytes kept, the rest counted
        assert log.startswith("flooding\nflooding\n") and len(log) < 4096 + 100
        assert "more bytes of the build's log dropped" in log
    if "/dev/zero" in build_line:  # its 32 MiB folder is full
        assert "No space left on device" in log
    assert left_behind("bubblewrap") == []


@needs_sandbox
def test_a_build_has_no_network(tmp_path: Path) -> None:
    _kit("cpp")
    line = "python3 -c 'import socket; socket.create_connection((\\\"127.0.0.1\\\", 6379), 2)'"
    code = _folder(tmp_path, line)
    with pytest.raises(BuildError) as failed:
        _build(code)
    assert "Network is unreachable" in failed.value.log or "refused" in failed.value.log


@needs_sandbox
def test_a_build_is_cached_by_its_code(tmp_path: Path) -> None:
    _kit("cpp")
    code = _folder(tmp_path, "g++ -o bot main.cpp")
    first = _build(code)
    again = _build(code)
    assert not first.cached and again.cached and again.folder == first.folder
    assert (first.folder / "bot").stat().st_mode & 0o111  # executable, by every uid
    other = _build(_folder(tmp_path, "g++ -o bot main.cpp", "int main() { return 1; }\n", "b"))
    assert not other.cached and other.folder != first.folder


def test_the_backends_without_builds_refuse_a_compiled_bot_loudly(tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailable, match="built and run by the bubblewrap backend"):
        Namespaces().launch(tmp_path, 0)
    with pytest.raises(SandboxUnavailable, match="built and run by the bubblewrap backend"):
        Namespaces.build_launch(
            BuildJob(tmp_path, build.PACKER, build._build_command, BuildLimits().sandboxed)
        )


@needs_sandbox
def test_a_kit_zipped_as_a_folder_plays_as_one_zipped_at_its_root(tmp_path: Path) -> None:
    kit = _kit("cpp")
    wrapped = tmp_path / "my_bot.zip"
    with zipfile.ZipFile(wrapped, "w") as out:  # as `zip -r my_bot.zip my_bot/` makes it
        out.writestr("my_bot/", "")
        for path in sorted(kit.iterdir()):
            out.write(path, f"my_bot/{path.name}")
    assert manifest_of(wrapped).language == "cpp"
    result = run_match("standard", 3, [str(wrapped), "low", "low", "low"], hands=1)
    seat = result.games[0].seats[0]
    assert seat.faults == [] and "built (cpp)" in seat.stderr, (seat.faults, seat.stderr)


def _tar(*members: tuple[str, bytes | None, bytes]) -> bytes:
    """A tar stream of (name, link target or None for a file, content) entries."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        for name, link, content in members:
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link.decode()
                archive.addfile(info)
            else:
                info.size = len(content)
                archive.addfile(info, io.BytesIO(content))
    return out.getvalue()


@pytest.mark.parametrize(
    ("members", "words"),
    [
        ([("./bot", b"/etc/passwd", b"")], "a symbolic link: only files and folders"),
        ([("../escape", None, b"x")], "outside its folder"),
        ([("/etc/owned", None, b"x")], "outside its folder"),
        ([("a", None, b"x"), ("a/b", None, b"y")], "comes under a file"),
    ],
)
def test_what_a_build_returns_is_unpacked_only_as_plain_files_inside_its_folder(
    tmp_path: Path, members: list[tuple[str, bytes | None, bytes]], words: str
) -> None:
    with pytest.raises(BuildError, match=words):
        build._extract(_tar(*members), tmp_path / "out")
    assert not (tmp_path / "escape").exists()
