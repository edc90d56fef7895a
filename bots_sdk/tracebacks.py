"""A bot's traceback as its author reads it: only the bot's own frames (not the SDK's, the
engine's or the import system's), whether the bot raised in its sandboxed process (the
traceback is text on its stderr) or in this one (``bidel reproduce --pdb``).

>>> own_frames('Traceback (most recent call last):\\n  File "/sdk/bots_sdk/host.py", '
...            'line 5, in serve\\n    answer = method(view)\\n  File "/bot/b.py", line 7, '
...            'in play\\n    raise ValueError(1)\\nValueError: 1\\n')[1:]
['  File "/bot/b.py", line 7, in play', '    raise ValueError(1)', 'ValueError: 1']
>>> own_frames("nothing went wrong")
[]
"""

from __future__ import annotations

import re
import traceback

#: Where the frames that are not the bot's come from: the SDK, the engine, the import system.
NOT_THE_BOTS = ("<frozen", "/bots_sdk/", "/engine/")


def own_frames(stderr: str, lines: int = 12) -> list[str]:
    """The last traceback in a bot's stderr with only the bot's own frames, at most ``lines``
    lines (the last ones: the exception and the frame that raised it)."""
    start = stderr.rfind("Traceback (most recent call last):")
    if start < 0:
        return []
    found = stderr[start:].rstrip().splitlines()
    kept, keep = found[:1], True
    for line in found[1:]:
        if line.startswith('  File "'):
            keep = not any(part in line for part in NOT_THE_BOTS)
        elif not line.startswith("    "):
            keep = True  # the exception's own line(s)
        if keep:
            kept.append(line)
    return kept[-lines:]


def own_traceback(error: BaseException, lines: int = 40) -> list[str]:
    """The traceback of an exception raised here, as :func:`own_frames` reads one.

    >>> def play():
    ...     raise KeyError("QS")
    >>> try:
    ...     play()
    ... except KeyError as exc:
    ...     own_traceback(exc)[-1]
    "KeyError: 'QS'"
    """
    text = "".join(traceback.format_exception(error))
    return own_frames(text, lines)


def last_frame(frames: list[str]) -> str:
    """Where a traceback's innermost own frame is, as ``file, line N``; '' for none.

    >>> last_frame(['Traceback (most recent call last):', '  File "/bot/b.py", line 7, in play',
    ...             '    raise ValueError(1)', 'ValueError: 1'])
    '/bot/b.py, line 7'
    """
    for line in reversed(frames):
        if line.startswith('  File "'):
            path, _, rest = line[len('  File "') :].partition('", line ')
            return f"{path}, line {rest.split(',')[0]}"
    return ""


def as_uploaded(line: str) -> str:
    """A traceback's line from a platform's runner with the bot's file named as its author
    uploaded it (the runner writes a seat's code as ``seat<N>-<name>`` in the sandbox's
    ``/bot``).

    >>> as_uploaded('  File "/bot/seat2-crasher.py", line 9, in play')
    '  File "crasher.py", line 9, in play'
    """
    return re.sub(r'"/bot/seat\d+-', '"', line)
