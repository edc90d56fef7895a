"""Bots in other languages: the manifest that names a bot's language, how it is built and run.

A bot is a Python file, or a folder (on the platform: a zip) with a manifest at its root,
``bidel.toml`` or ``bot.json``::

    language = "cpp"                             # python, cpp, rust, java, javascript
    build = "g++ -std=c++17 -O2 -o bot main.cpp"  # optional: the language's default
    run = "./bot"                                 # optional: the language's default

``build`` is a shell line run in a copy of the bot's folder (``/bin/sh -c``), in the sandbox,
with the build's limits and no network (:mod:`bots_sdk.builds.build`); ``run`` is split like a shell
line (no shell features: no pipes, no variables) and run in the built folder, read-only, in the
same sandbox and under the same limits and clock as a Python bot. A Python bot needs no
manifest (a ``.py`` file, or a zip with ``bot.py``); its manifest, if any, may not change how it
is run: the SDK's host runs it.

>>> m = Manifest.parse("bidel.toml", b'language = "cpp"')
>>> m.language, m.build, m.run
('cpp', 'g++ -std=c++17 -O2 -o bot *.cpp', ['./bot'])
>>> Manifest.parse("bot.json", b'{"language": "cobol"}')  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
bots_sdk.builds.languages.ManifestError: bot.json: language 'cobol' is not one of python, ...
"""

from __future__ import annotations

import io
import json
import shlex
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The manifest's names, in the order they are looked for at a bot's root.
MANIFESTS = ("bidel.toml", "bot.json")
#: The most a manifest (the file) may hold, and a command in it.
MAX_MANIFEST = 4096
MAX_COMMAND = 1000


class ManifestError(ValueError):
    """A manifest that cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Language:
    """One supported language: its default build (a shell line; empty: nothing to build) and
    run command, the programs they need, and the file a bot of it must have."""

    name: str
    build: str
    run: str
    #: Programs the build and the run need on this host (looked up on PATH).
    tools: tuple[str, ...]
    #: A file the bot's folder must hold (its entry point for the defaults).
    entry: str
    #: The kit's file name extensions (what ``bidel pack`` takes besides the manifest).
    sources: tuple[str, ...]


#: Java's run flags: the JVM within a bot's limits (512 MiB of address space, 16 threads):
#: one JIT tier and one compiler thread, small reserved spaces, no signal dispatcher, attach
#: listener or notification thread (11 threads in all); glibc's malloc kept to one arena.
JAVA_RUN = (
    "env MALLOC_ARENA_MAX=1 java -XX:+UseSerialGC -Xmx64m -Xss512k -XX:TieredStopAtLevel=1 "
    "-XX:CICompilerCount=1 -XX:ReservedCodeCacheSize=16m -XX:MaxMetaspaceSize=32m "
    "-XX:CompressedClassSpaceSize=16m -XX:-UsePerfData -Xshare:auto -XX:+ReduceSignalUsage "
    "-XX:+DisableAttachMechanism -XX:-UseNotificationThread -cp classes Main"
)
#: javac within the build's 2 GiB of address space (the default class space and second JIT
#: tier do not fit).
JAVA_BUILD = (
    "javac -J-Xmx256m -J-XX:+UseSerialGC -J-XX:TieredStopAtLevel=1 -J-XX:CICompilerCount=1 "
    "-J-XX:ReservedCodeCacheSize=64m -J-XX:CompressedClassSpaceSize=64m -J-XX:-UsePerfData "
    "-encoding UTF-8 -d classes $(find src -name '*.java')"
)

#: Node's run flags: V8 reserves 512 MiB of address space for its JIT's code alone, so under
#: a bot's address-space limit Node runs without the JIT (and with one worker thread).
NODE_FLAGS = "--jitless --no-expose-wasm --v8-pool-size=1 --max-old-space-size=192"

LANGUAGES: dict[str, Language] = {
    language.name: language
    for language in (
        Language("python", "", "", (), "bot.py", (".py",)),
        Language(
            "cpp",
            "g++ -std=c++17 -O2 -o bot *.cpp",
            "./bot",
            ("g++",),
            "main.cpp",
            (".cpp", ".hpp", ".h", ".cc", ".c"),
        ),
        Language(
            "rust",
            "rustc --edition 2021 -O -o bot src/main.rs",
            "./bot",
            ("rustc", "cc"),
            "src/main.rs",
            (".rs", ".toml"),
        ),
        Language(
            "java",
            JAVA_BUILD,
            JAVA_RUN,
            ("javac", "java"),
            "src/Main.java",
            (".java",),
        ),
        Language(
            "javascript",
            "node --check bot.js",
            f"node {NODE_FLAGS} bot.js",
            ("node",),
            "bot.js",
            (".js", ".mjs", ".json"),
        ),
    )
}


@dataclass(frozen=True)
class Manifest:
    """A bot's manifest, read and checked: its language and the build and run commands (the
    language's defaults filled in)."""

    language: str
    build: str
    run: list[str]
    #: Where it came from (``bidel.toml``, ``bot.json``; "" for a plain Python bot).
    source: str = ""

    @property
    def compiled(self) -> bool:
        """Whether the bot is built and run by its own commands (not the SDK's Python host)."""
        return self.language != "python"

    @classmethod
    def parse(cls, name: str, data: bytes) -> Manifest:
        if len(data) > MAX_MANIFEST:
            raise ManifestError(f"{name} is {len(data)} bytes; the limit is {MAX_MANIFEST}")
        try:
            text = data.decode("utf-8")
            fields: Any = tomllib.loads(text) if name.endswith(".toml") else json.loads(text)
        except UnicodeDecodeError:
            raise ManifestError(f"{name} is not UTF-8 text") from None
        except (tomllib.TOMLDecodeError, ValueError) as exc:
            raise ManifestError(f"{name} cannot be read: {exc}") from None
        if not isinstance(fields, dict):
            raise ManifestError(f"{name} must hold a table of keys, not {type(fields).__name__}")
        unknown = sorted(set(fields) - {"language", "build", "run"})
        if unknown:
            raise ManifestError(
                f"{name}: unknown key(s) {', '.join(map(repr, unknown))}; "
                "the keys are language, build and run"
            )
        for key, value in fields.items():
            if not isinstance(value, str):
                raise ManifestError(f"{name}: {key} must be a string, not {type(value).__name__}")
            if len(value) > MAX_COMMAND or "\x00" in value:
                raise ManifestError(f"{name}: {key} is longer than {MAX_COMMAND} characters")
        language = fields.get("language", "")
        if not language:
            raise ManifestError(f"{name}: language is missing ({', '.join(LANGUAGES)})")
        if language not in LANGUAGES:
            raise ManifestError(
                f"{name}: language {language!r} is not one of {', '.join(LANGUAGES)}"
            )
        default = LANGUAGES[language]
        if language == "python":
            if fields.get("build") or fields.get("run"):
                raise ManifestError(
                    f"{name}: a Python bot is run by the SDK's host from its bot.py; "
                    "leave out build and run"
                )
            return cls("python", "", [], name)
        build = fields.get("build", default.build).strip()
        run_line = fields.get("run", default.run)
        try:
            run = shlex.split(run_line)
        except ValueError as exc:
            raise ManifestError(f"{name}: run cannot be split into words: {exc}") from None
        if not run:
            raise ManifestError(f"{name}: run is empty")
        return cls(language, build, run, name)

    def to_dict(self) -> dict[str, str | list[str]]:
        return {"language": self.language, "build": self.build, "run": self.run}


PYTHON = Manifest("python", "", [])


def read_manifest(files: dict[str, bytes]) -> Manifest | None:
    """The manifest among a bot's root files (name -> bytes), or None when it has none."""
    found = [name for name in MANIFESTS if name in files]
    if len(found) > 1:
        raise ManifestError("the bot has both bidel.toml and bot.json: keep one")
    return Manifest.parse(found[0], files[found[0]]) if found else None


def zip_root(names: list[str]) -> str:
    """Where a zip's bot is: ``""`` (its root), or the one folder everything is in when that
    folder holds a manifest and the root holds neither a manifest nor ``bot.py`` (a folder
    zipped as a whole: ``zip -r my_bot.zip my_bot/``).

    >>> zip_root(["bidel.toml", "main.cpp"]), zip_root(["my_bot/", "my_bot/bidel.toml"])
    ('', 'my_bot/')
    >>> zip_root(["a/bidel.toml", "b/main.cpp"])
    ''
    """
    if any(name in names for name in (*MANIFESTS, "bot.py")):
        return ""
    tops = {name.split("/", 1)[0] for name in names}
    if len(tops) != 1 or not all("/" in name for name in names if name.rstrip("/") not in tops):
        return ""
    folder = f"{tops.pop()}/"
    return folder if any(f"{folder}{name}" in names for name in MANIFESTS) else ""


def manifest_of_zip(data: bytes) -> Manifest:
    """A zip's manifest (:data:`PYTHON` when it has none), at its root or in the one folder
    it holds (:func:`zip_root`)."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = archive.namelist()
        root = zip_root(names)
        files = {
            name: archive.read(root + name)[: MAX_MANIFEST + 1]
            for name in MANIFESTS
            if root + name in names
        }
    return read_manifest(files) or PYTHON


def manifest_of(path: Path) -> Manifest:
    """The manifest of a bot on disk: a ``.py`` file, a zip, or a folder."""
    if path.is_dir():
        files = {
            name: (path / name).read_bytes()[: MAX_MANIFEST + 1]
            for name in MANIFESTS
            if (path / name).is_file()
        }
        manifest = read_manifest(files)
        if manifest is None:
            if (path / "bot.py").is_file():
                return PYTHON
            raise ManifestError(
                f"{path} has no bidel.toml (or bot.json) naming its language, nor a bot.py"
            )
        return manifest
    if path.suffix.lower() == ".zip":
        try:
            return manifest_of_zip(path.read_bytes())
        except zipfile.BadZipFile:
            raise ManifestError(f"{path} is not a readable zip archive") from None
    return PYTHON
