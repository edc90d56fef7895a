"""Workers say they are alive, so that nobody has to ask them.

Every worker process of the platform (``celery -A hearts_platform worker``, a runner, a
people's runner) writes a *beat* every :data:`BEAT_SECONDS` from a thread of its main process:
its name, the queues it serves, what its sandbox can do, when. The health check
(:mod:`hearts_platform.health`) reads the beats: one read, whatever the number of callers and
however busy the workers are (their matches run in other processes), never a broadcast that
holds a broker connection while it waits for the replies.

- A worker that stops as it should removes its beat (Celery's ``worker_shutdown``).
- One that beat no more for :data:`STALE_SECONDS` (10) is *missing*: the health check names
  it, says when it was last heard and, for a runner, answers 503, until
  :data:`FORGET_SECONDS` (60) after its last beat; then it is forgotten.

Where: Redis at ``REDIS_URL`` (``bidel:heartbeat:<name>``, expiring after FORGET_SECONDS), else
a folder under ``BIDEL_VAR_DIR`` (``heartbeats/<name>.json``, written whole by a rename).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any, Protocol

logger = logging.getLogger(__name__)

#: Seconds between two beats of a worker.
BEAT_SECONDS = 2.0
#: A worker whose last beat is older is missing (five beats missed: a busy host is slower,
#: never that slow).
STALE_SECONDS = 10.0
#: A missing worker is named this long after its last beat, then forgotten (a monitor that
#: polls the health check every 30 s sees it; the matches it held are played again by the
#: platform's reaper whether or not it is named).
FORGET_SECONDS = 60.0
#: The most beats read (a platform of more workers is not this one's concern).
MAX_WORKERS = 1000
#: Seconds a read or write of the store may take before it counts as failed.
STORE_TIMEOUT = 2.0


class Store(Protocol):
    def write(self, beat: dict[str, Any]) -> None: ...

    def remove(self, name: str) -> None: ...

    def read(self) -> list[dict[str, Any]]: ...


class RedisStore:
    """Beats in Redis: ``bidel:heartbeat:<name>``, each expiring FORGET_SECONDS after it was
    written. One small pool, timeouts on every call: a slow Redis fails a read, never holds
    one for ever."""

    PREFIX = "bidel:heartbeat:"

    def __init__(self, url: str) -> None:
        import redis

        pool = redis.BlockingConnectionPool.from_url(
            url,
            max_connections=4,
            timeout=STORE_TIMEOUT,  # waiting for a connection of the pool
            socket_timeout=STORE_TIMEOUT,
            socket_connect_timeout=STORE_TIMEOUT,
        )
        self.client = redis.Redis(connection_pool=pool)
        self.where = _sanitized(url)

    def write(self, beat: dict[str, Any]) -> None:
        key = self.PREFIX + str(beat["name"])
        self.client.set(key, json.dumps(beat), ex=int(FORGET_SECONDS))

    def remove(self, name: str) -> None:
        self.client.delete(self.PREFIX + name)

    def read(self) -> list[dict[str, Any]]:
        keys = []
        for key in self.client.scan_iter(match=self.PREFIX + "*", count=200):
            keys.append(key)
            if len(keys) >= MAX_WORKERS:
                break
        return [_beat(raw) for raw in (self.client.mget(keys) if keys else []) if raw]


class FileStore:
    """Beats as files of a folder (the embedded broker's machine: one host)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.where = str(folder.resolve())

    def _path(self, name: str) -> Path:
        safe = "".join(c if c.isalnum() or c in "@.-_" else "_" for c in name)[:200]
        return self.folder / f"{safe}.json"

    def write(self, beat: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self._path(str(beat["name"]))
        partial = path.with_name(f".{path.name}.{os.getpid()}.part")
        partial.write_text(json.dumps(beat))
        os.replace(partial, path)

    def remove(self, name: str) -> None:
        self._path(name).unlink(missing_ok=True)

    def read(self) -> list[dict[str, Any]]:
        if not self.folder.is_dir():
            return []
        beats = []
        now = time.time()
        for path in sorted(self.folder.glob("*.json"))[:MAX_WORKERS]:
            try:
                if now - path.stat().st_mtime > FORGET_SECONDS:
                    path.unlink(missing_ok=True)
                    continue
                beat = _beat(path.read_bytes())
            except OSError:
                continue  # (removed as it was read)
            if beat:
                beats.append(beat)
        return beats


def _beat(raw: bytes | str) -> dict[str, Any]:
    try:
        beat = json.loads(raw)
    except ValueError:
        return {}
    ok = isinstance(beat, dict) and isinstance(beat.get("name"), str)
    return beat if ok and isinstance(beat.get("at"), (int, float)) else {}


def _sanitized(url: str) -> str:
    """``url`` without its password.

    >>> _sanitized("redis://:hunter2@cache:6379/1")
    'redis://cache:6379/1'
    """
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def store_from_environment() -> Store:
    """Redis at ``REDIS_URL``, else files under ``BIDEL_VAR_DIR`` (default: the project's var/),
    as the broker is chosen (:func:`hearts_runner.config.transport`)."""
    redis_url = os.environ.get("REDIS_URL", "")
    if redis_url:
        return RedisStore(redis_url)
    default = Path(__file__).resolve().parent.parent / "var"
    return FileStore(Path(os.environ.get("BIDEL_VAR_DIR") or default) / "heartbeats")


class Heart:
    """Beats for one worker from a thread of its own, until :meth:`stop` (which removes the
    beat: a worker that stops as it should is not missing). A store that fails is logged and
    tried again at the next beat: the worker goes on working."""

    def __init__(self, store: Store, name: str, describe: Any) -> None:
        self.store = store
        self.name = name
        self.describe = describe  # () -> the beat's fields beside name and times
        self.started = time.time()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bidel-heartbeat", daemon=True)

    def beat(self) -> dict[str, Any]:
        return {**self.describe(), "name": self.name, "at": time.time(), "since": self.started}

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        failing = False
        while not self._stop.is_set():
            try:
                self.store.write(self.beat())
                failing = False
            except Exception:  # noqa: BLE001 — the store's trouble, never the worker's
                if not failing:
                    logger.exception("bidel: the heartbeat of %s could not be written", self.name)
                failing = True
            self._stop.wait(BEAT_SECONDS)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(STORE_TIMEOUT * 2)
        try:
            self.store.remove(self.name)
        except Exception:  # noqa: BLE001
            logger.exception("bidel: the heartbeat of %s could not be removed", self.name)


def summary(beats: list[dict[str, Any]], now: float, runner_queue: str) -> dict[str, Any]:
    """What the beats say, as the health check reports it: the workers heard within
    STALE_SECONDS, the runners among them (those serving ``runner_queue``), the sandbox as
    the first of those sees it, and the workers and runners missing (last heard earlier).

    >>> beat = {"name": "r1", "at": 100.0, "queues": ["runner"], "sandbox": {"ok": True}}
    >>> report = summary([beat, {**beat, "name": "r2", "at": 50.0}], 101.0, "runner")
    >>> report["runners"]["runners"], report["runners"]["missing"]
    (['r1'], ['r2 (last heard 51 s ago)'])
    >>> report["runners"]["ok"], report["workers"]["ok"], report["sandbox"]["ok"]
    (False, True, True)
    """
    alive = sorted((b for b in beats if now - b["at"] <= STALE_SECONDS), key=lambda b: b["name"])
    gone = sorted((b for b in beats if now - b["at"] > STALE_SECONDS), key=lambda b: b["name"])

    def serves(beat: dict[str, Any]) -> bool:
        queues = beat.get("queues")
        return isinstance(queues, list) and runner_queue in queues

    def heard(beat: dict[str, Any]) -> str:
        return f"{beat['name']} (last heard {now - beat['at']:.0f} s ago)"

    runners = [b for b in alive if serves(b)]
    workers: dict[str, Any] = {
        "ok": bool(alive),
        "count": len(alive),
        "workers": [b["name"] for b in alive],
        "missing": [heard(b) for b in gone],
    }
    if not alive:
        workers["error"] = f"no worker has been heard from in {STALE_SECONDS:g} s"
    missing_runners = [heard(b) for b in gone if serves(b)]
    runner_report: dict[str, Any] = {
        "ok": bool(runners) and not missing_runners,
        "count": len(runners),
        "runners": [b["name"] for b in runners],
        "missing": missing_runners,
    }
    if missing_runners:
        runner_report["error"] = (
            f"runner(s) gone without a word: {', '.join(missing_runners)} (killed, or cut "
            f"off: named until {FORGET_SECONDS:g} s after their last beat)"
        )
    elif not runners:
        runner_report["error"] = f"no worker serves the {runner_queue!r} queue: nothing plays"
    sandboxes = [b.get("sandbox") or {} for b in runners]
    able = [s for s in sandboxes if s.get("ok")]
    if able:
        sandbox = {"ok": True, "runners": len(able), **_sandbox_fields(able[0])}
    elif runners:
        first = sandboxes[0]
        sandbox = {
            "ok": False,
            "runners": 0,
            **_sandbox_fields(first),
            "detail": f"no runner can sandbox bots: {first.get('detail')}",
        }
    else:
        sandbox = {"ok": False, "runners": 0, "detail": "no runner has been heard from"}
    return {"workers": workers, "runners": runner_report, "sandbox": sandbox}


def _sandbox_fields(status: dict[str, Any]) -> dict[str, Any]:
    return {k: status.get(k) for k in ("backend", "limits", "packages", "detail")}
