"""The sandbox without root: an ordinary user's ``bidel play`` confines bots with user
namespaces where the kernel allows them, and refuses, naming the layers, where it does not.

Run from root through ``as_user.py`` (uid 65534 in a namespace of its own); a bot checks
each layer from inside and crashes, naming what it found, if one is missing."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support import PROJECT_DIR

AS_USER = Path(__file__).with_name("as_user.py")

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="switching to an ordinary user needs root"),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
    pytest.mark.skipif(
        int(Path("/proc/sys/user/max_user_namespaces").read_text()) == 0,
        reason="this kernel allows no user namespaces at all",
    ),
]

PROBE = """
import ctypes, errno, os, socket
from pathlib import Path

import numpy

from bots_sdk import Bot

def problems():
    found = []
    try:
        socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
        found.append("reached the host's 127.0.0.1:{port}")
    except OSError:
        pass
    up = [name for _, name in socket.if_nameindex() if name != "lo"]
    if up:
        found.append(f"network interfaces {{up}}")
    for path in ("/usr/bidel-probe", "/sdk/bots_sdk/bidel-probe", "/bidel-probe"):
        try:
            Path(path).write_text("x")
            found.append(f"wrote {{path}}")
        except OSError:
            pass
    if Path({marker!r}).exists():
        found.append("sees the host's /tmp")
    Path("/tmp/mine").write_text("a bot may write its own /tmp")
    if "BIDEL_PROBE_SECRET" in os.environ:
        found.append("inherited the environment")
    if os.getuid() in (0, 65534) or os.geteuid() == 0:
        found.append(f"uid {{os.getuid()}}")
    try:
        os.setuid(0)
        found.append("became root")
    except OSError:  # EPERM, or EINVAL where no uid 0 is mapped
        pass
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
    if len(pids) > 4:
        found.append(f"sees {{len(pids)}} processes")
    libc = ctypes.CDLL(None, use_errno=True)
    if os.uname().machine == "x86_64":  # keyctl(KEYCTL_GET_KEYRING_ID, session keyring)
        if libc.syscall(250, 0, -3, 0) >= 0 or ctypes.get_errno() != errno.EPERM:
            found.append("keyctl allowed: no seccomp filter")
    if float(numpy.ones(3).sum()) != 3.0:
        found.append("numpy is wrong")
    return found


class Probe(Bot):
    def play(self, view):
        found = problems()
        if found:
            raise RuntimeError("sandbox layers missing: " + "; ".join(found))
        return view.legal[0]

    def pass_cards(self, view):
        return list(view.hand[: view.rules.pass_count])
"""


def _as_user(tmp_path: Path, *args: str, no_user_namespaces: bool = False):
    tmp_path.chmod(0o777)
    flags = ["--no-user-namespaces"] if no_user_namespaces else []
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "BIDEL_PROBE_SECRET": "1",
        "PYTHONPATH": str(PROJECT_DIR),
    }
    # The command a bot author types: the installed `bidel` (python -m bots_sdk where absent).
    bidel = Path(sys.executable).with_name("bidel")
    command = [str(bidel)] if bidel.exists() else [sys.executable, "-m", "bots_sdk"]
    return subprocess.run(
        [sys.executable, str(AS_USER), *flags, "--", *command, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


@pytest.fixture
def tmp_path():
    # (pytest's own folder is root's alone: the user could not read the bot there)
    with tempfile.TemporaryDirectory(prefix="bidel-rootless-") as folder:
        yield Path(folder)


@pytest.fixture
def probe(tmp_path: Path):
    listener = socket.create_server(("127.0.0.1", 0))
    marker = Path("/tmp") / f"bidel-probe-marker-{os.getpid()}"
    marker.write_text("the host's /tmp")
    bot = tmp_path / "probe.py"
    bot.write_text(PROBE.format(port=listener.getsockname()[1], marker=str(marker)))
    bot.chmod(0o644)
    yield bot
    listener.close()
    marker.unlink()


def test_an_ordinary_user_plays_in_the_sandbox_with_every_layer_but_the_uid(
    probe: Path, tmp_path: Path
) -> None:
    done = _as_user(tmp_path, "play", probe.name, "low", "low", "low", "--hands", "2")
    assert done.returncode == 0, done.stderr
    assert "sandbox bubblewrap (not root: a user namespace per seat)" in done.stderr
    applied = next(line for line in done.stderr.splitlines() if "layers applied" in line)
    for layer in (
        "no network",
        "pid namespace",
        "read-only filesystem",
        "private tmpfs",
        "a user namespace per seat",
        "seccomp",
        "rlimits",
        "empty environment",
    ):
        assert layer in applied, applied
    assert "not applied here: a uid per seat" in done.stderr
    assert "packages a bot may import: numpy" in done.stderr
    assert "crash" not in done.stdout and "faults" in done.stdout


def test_a_faulting_layer_check_is_seen_as_the_bots_crash(probe: Path, tmp_path: Path) -> None:
    # The same probe, unsandboxed: it finds the layers missing and says which (so the test
    # above can fail).
    done = _as_user(
        tmp_path, "play", probe.name, "low", "low", "low", "--hands", "1", "--unsafe-no-sandbox"
    )
    assert done.returncode == 1
    assert "sandbox layers missing" in done.stderr + done.stdout
    assert "sees the host's /tmp" in done.stderr and "no seccomp filter" in done.stderr


def test_without_user_namespaces_an_ordinary_user_is_refused_naming_the_layers(
    probe: Path, tmp_path: Path
) -> None:
    done = _as_user(
        tmp_path, "play", probe.name, "low", "low", "low", "--hands", "1", no_user_namespaces=True
    )
    assert done.returncode == 2
    assert "cannot sandbox bots here" in done.stderr
    assert "does not let users make user namespaces" in done.stderr
    assert "network, pid and mount namespaces, read-only root, private /tmp" in done.stderr
    assert "--unsafe-no-sandbox" in done.stderr
    assert done.stdout == ""
