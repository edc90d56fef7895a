"""A build step that reaches for the process that packs its output, as the second red team's
build did its parent shell's: for each pid given (the build line's ``$PPID``, and 1), open
``/proc/<pid>/mem`` for writing (to swap in code of its own), ``/proc/<pid>/fd/1`` (to write
the stream itself) and ``/proc/<pid>/environ``, and ptrace it. It prints what each attempt
got; exits 1 when every one was refused (the build fails, saying so), 0 if any reached (the
build then goes on and builds the bot: a test that expects the refusal fails)."""

import ctypes
import os
import sys


def main() -> None:
    reached = []
    for pid in sys.argv[1:]:
        for path, mode in (
            (f"/proc/{pid}/mem", "r+b"),
            (f"/proc/{pid}/fd/1", "wb"),
            (f"/proc/{pid}/environ", "rb"),
        ):
            try:
                with open(path, mode, buffering=0) as handle:
                    if mode == "rb":
                        handle.read(1)
            except OSError as exc:
                print(f"refused: {path}: {exc.strerror}", file=sys.stderr)
            else:
                reached.append(path)
                print(f"REACHED: {path}", file=sys.stderr)
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.ptrace(16, int(pid), None, None) == 0:  # PTRACE_ATTACH
            reached.append(f"ptrace {pid}")
            print(f"REACHED: ptrace {pid}", file=sys.stderr)
        else:
            print(f"refused: ptrace {pid}: {os.strerror(ctypes.get_errno())}", file=sys.stderr)
    if reached:
        sys.exit(0)
    print("every reach for the packer was refused", file=sys.stderr)
    sys.exit(1)


if __name__ == "__main__":  # (pytest imports it for doctests: nothing runs then)
    main()
