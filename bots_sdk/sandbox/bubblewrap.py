"""The default backend: bubblewrap's namespaces around each bot, root or rootless.
docs/security.md says what each layer stops.

The bubblewrap chain, exec'd (no ``preexec_fn``) from an empty environment::

    sh (joins the seat's cgroup: memory, pids, cpuacct; see bots_sdk.sandbox.cgroups)
      setpriv --pdeathsig=KILL
        prlimit --as --cpu --fsize --nofile --nproc --core=0 --
          unshare --mount   (a private mount namespace, gone with the chain)
            sh -c 'mount -t tmpfs -o size=…,nr_inodes=… …'   (the bot's /tmp: bytes and files)
              bwrap --unshare-net --unshare-pid --unshare-ipc --unshare-uts --die-with-parent
                    --new-session --clearenv --seccomp FD  (read-only: /usr, the Python runtime,
                    the SDK, the bot; that tmpfs at /tmp; /proc and /dev of its own)
                setpriv --reuid=U --regid=U --clear-groups --inh-caps=-all --no-new-privs
                  python -I -S -c 'run bots_sdk.host' /bot/<file> /tmp

No network (its own namespace has only a loopback that is down), its own PID namespace with
bwrap's reaper as PID 1 (so SIGXCPU works), an unprivileged uid of its own (so RLIMIT_NPROC
counts), a seccomp filter (:mod:`bots_sdk.sandbox.seccomp`: no keyring, namespaces, mounts, tracing,
BPF…), one cgroup for the bot's whole process tree (one CPU clock, one memory and process
budget), and ``--die-with-parent`` plus a process-group kill: nothing it starts survives.

>>> Bubblewrap(layers=["x"]).layers
['x']
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from bots_sdk.sandbox import cgroups, seccomp
from bots_sdk.sandbox.base import (
    SDK_ROOT,
    BuildJob,
    BuiltBot,
    Launch,
    Limits,
    SandboxUnavailable,
    host_argv,
)
from bots_sdk.sandbox.layers import (
    CGROUP_LAYER,
    MOUNT_TMP,
    UID_LAYER,
    USR_ROOT,
    check_common,
    linux_layers,
    mount_parents,
    mount_point,
    open_dirs,
    prlimit,
    proc_masks,
    runtime_binds,
    seat_group,
    tmp_options,
)

#: Rootless (an author's laptop): each seat gets a user namespace of its own instead of a uid
#: of its own; process counts are per seat through it.
_ROOTLESS_UID = "a user namespace per seat (in place of a uid per seat: not root)"


def _rootless() -> bool:
    return os.geteuid() != 0


@dataclass
class Bubblewrap:
    """Namespaces, mounts, an unprivileged uid and rlimits (see the module docstring).

    Run by a user other than root (``rootless``), where the kernel lets unprivileged users
    make user namespaces, the same chain starts inside a user namespace of the seat's own
    (``unshare --user --map-root-user``: it may mount the bot's /tmp there) and bwrap puts the
    bot in a second one, as uid 1000 with no capabilities: the same layers, with a user
    namespace per seat in place of a uid per seat. Cgroups are used where the host delegates
    them to the user, else the rlimits bound each process (:attr:`not_applied` says so)."""

    limits: Limits = field(default_factory=Limits)
    base_uid: int = 61000
    rootless: bool = field(default_factory=_rootless)
    layers: list[str] = field(default_factory=list)
    #: Layers of the full sandbox this host cannot give, each with why.
    not_applied: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.layers:
            return
        layers = linux_layers(pid="pid namespace", die="die with the referee")
        found = cgroups.support()
        if not found.ok:
            layers.remove(CGROUP_LAYER)
            self.not_applied.append(f"cgroup per seat ({found.detail}): rlimits per process")
        if self.rootless:
            layers[layers.index(UID_LAYER)] = _ROOTLESS_UID
            self.not_applied.append("a uid per seat (not root): a user namespace per seat")
        self.layers = layers

    @staticmethod
    def check() -> None:
        """Raise :class:`SandboxUnavailable` naming what is missing on this host."""
        for tool in ("bwrap", "setpriv", "prlimit", "unshare"):
            if shutil.which(tool) is None:
                raise SandboxUnavailable(
                    f"{tool} is not installed (bubblewrap, util-linux): the sandbox needs it"
                )
        if _rootless():
            _check_user_namespaces()
        probe = subprocess.run(
            [
                *(_ROOTLESS_PROBE if _rootless() else []),
                "bwrap",
                "--unshare-net",
                "--unshare-pid",
                *USR_ROOT,
                "--proc",
                "/proc",
                "--dev",
                "/dev",
                "/bin/true",
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if probe.returncode != 0:
            raise SandboxUnavailable(
                f"bubblewrap cannot create namespaces here: {probe.stderr.strip()}"
            )
        check_common()

    def uid(self, seat: int) -> int:
        # One uid per (referee process, seat): matches in parallel never share a process count.
        return self.base_uid + (os.getpid() % 4000) * 16 + seat

    def launch(self, bot: Path | BuiltBot, seat: int) -> Launch:
        if isinstance(bot, BuiltBot):  # its folder read-only at /bot, its run command there
            return self._launch(
                self.uid(seat),
                self.limits,
                binds=[*((folder, folder) for folder in bot.binds), (str(bot.folder), "/bot")],
                chdir="/bot",
                command=list(bot.command),
                path=bot.path,
                report_pid=True,
            )
        runtime = Path(sys.base_prefix).resolve()
        packages = [(str(folder), at) for folder, at in runtime_binds()]
        inside = f"/bot/{bot.name}"
        return self._launch(
            self.uid(seat),
            self.limits,
            binds=[
                (str(runtime), str(runtime)),
                (str(SDK_ROOT / "engine"), "/sdk/engine"),
                (str(SDK_ROOT / "bots_sdk"), "/sdk/bots_sdk"),
                *packages,
                (str(bot.resolve()), inside),
            ],
            chdir="/tmp",
            command=host_argv(os.path.realpath(sys.executable), inside),
            path="",
            report_pid=True,
        )

    def build_launch(self, job: BuildJob) -> Launch:
        """The build of a bot in another language (:mod:`bots_sdk.builds.build`): the same
        layers under the build's limits, its sources read-only at /src, its toolchain's folders
        read-only where they are, a uid of its own; the packer (:mod:`bots_sdk.builds.packer`)
        and the interpreter that runs it read-only, the packer as the sandbox's PID 1."""
        runtime = str(Path(sys.base_prefix).resolve())
        return self._launch(
            self.uid(15),  # (seats use 0..n-1 of the process's range: 15 is the builds')
            job.limits,
            binds=[
                *((folder, folder) for folder in job.binds),
                (runtime, runtime),
                (str(job.packer), "/sdk/packer.py"),
                (str(job.sources), "/src"),
            ],
            chdir="/tmp",
            command=job.command("/src", "/tmp/build", "/sdk/packer.py", True),
            path=job.path,
            report_pid=False,
            pid1=True,
        )

    def _launch(
        self,
        uid: int,
        limits: Limits,
        *,
        binds: list[tuple[str, str]],
        chdir: str,
        command: list[str],
        path: str,
        report_pid: bool,
        pid1: bool = False,
    ) -> Launch:
        """The bubblewrap chain (see the module's docstring) around ``command``: /usr and
        ``binds`` read-only, a capped tmpfs at /tmp, ``PATH`` set where ``path`` is given;
        ``pid1``: ``command`` is the PID namespace's init (no bwrap process inside with it)."""
        tmp_point = str(mount_point())  # may raise: nothing held
        group = seat_group(limits)
        try:
            filter_fd = seccomp.memfd()
            info_read, info_write = os.pipe() if report_pid else (None, None)
        except BaseException:
            if group is not None:
                group.remove()
            raise
        if self.rootless:
            # The seat's own user namespace first (its process count is the seat's: rlimits
            # are set inside it), in which it may mount the bot's /tmp; bwrap then puts the
            # bot in a nested one as an ordinary uid with no capabilities.
            outer = [
                "unshare",
                "--user",
                "--map-root-user",
                "--mount",
                "--propagation",
                "private",
                "--",
            ]
            mount_tmp = ["/bin/sh", "-c", MOUNT_TMP, "sh", tmp_options(limits), tmp_point]
            chain = [*outer, *mount_tmp, *prlimit(limits)]
            user = ["--unshare-user", "--uid", "1000", "--gid", "1000", "--cap-drop", "ALL"]
            drop: list[str] = []
        else:
            chain = [
                *prlimit(limits),
                "unshare",
                "--mount",
                "--propagation",
                "private",
                "--",
                "/bin/sh",
                "-c",
                MOUNT_TMP,
                "sh",
                tmp_options(limits),
                tmp_point,
            ]
            user = []
            drop = [
                "setpriv",
                f"--reuid={uid}",
                f"--regid={uid}",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--no-new-privs",
            ]
        info = ["--info-fd", str(info_write)] if info_write is not None else []
        mounts = [arg for source, at in binds for arg in ("--ro-bind", source, at)]
        argv = [
            *(group.enter_argv() if group else []),
            "setpriv",
            "--pdeathsig=KILL",
            "--",
            *chain,
            "bwrap",
            *info,
            "--seccomp",
            str(filter_fd),
            *user,
            "--unshare-net",
            "--unshare-pid",
            *(["--as-pid-1"] if pid1 else []),
            "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent",
            "--new-session",
            "--clearenv",
            *open_dirs(mount_parents([at for _, at in binds])),
            *USR_ROOT,
            *mounts,
            "--proc",
            "/proc",
            *proc_masks(),
            "--dev",
            "/dev",
            "--bind",
            tmp_point,
            "/tmp",
            "--remount-ro",
            "/",  # bwrap's root tmpfs: the bot's own where it is "root"
            "--chdir",
            chdir,
            "--setenv",
            "HOME",
            "/tmp",
            *(["--setenv", "PATH", path] if path else []),
            *drop,
            *command,
        ]
        fds = (filter_fd,) if info_write is None else (filter_fd, info_write)
        return Launch(
            argv,
            {},
            pass_fds=fds,
            group=group,
            info_read=info_read,
            close_after_start=fds,
        )


#: Runs the bubblewrap probe as the rootless chain does: in a user namespace of its own.
_ROOTLESS_PROBE = ["unshare", "--user", "--map-root-user", "--mount", "--"]


def _check_user_namespaces() -> None:
    """Not root: the sandbox needs unprivileged user namespaces. Refuse saying why not."""
    probe = subprocess.run([*_ROOTLESS_PROBE, "true"], capture_output=True, text=True, timeout=30)
    if probe.returncode == 0:
        return
    reason = probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else "refused"
    raise SandboxUnavailable(
        "not root, and this kernel does not let users make user namespaces "
        f"({reason}; see sysctls user.max_user_namespaces, kernel.unprivileged_userns_clone, "
        "kernel.apparmor_restrict_unprivileged_userns). Without them none of these layers "
        "can be applied: network, pid and mount namespaces, read-only root, private /tmp, "
        "a uid or user namespace per seat"
    )
