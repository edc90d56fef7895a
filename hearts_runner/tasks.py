"""The runner's tasks: play a job, analyse a stored game's seat, say what the sandbox can do.
Thin shells over :func:`bots_sdk.referee.jobs.run_job` and :func:`bots_sdk.analysis.run_analysis`
(JSON in, JSON out; names explicit so queued work survives a refactoring)."""

from __future__ import annotations

import functools
import os
import socket
from typing import Any

from celery import current_app, shared_task
from celery.signals import worker_ready, worker_shutdown
from celery.worker.control import inspect_command

from bots_sdk import runtime
from bots_sdk.analysis import run_analysis, with_luck
from bots_sdk.referee.jobs import Job, JobError, JobResult, run_job
from bots_sdk.sandbox import SandboxUnavailable, default_launcher, per_bot_limits
from hearts_runner import heartbeat, live
from hearts_runner.config import PLATFORM_QUEUE, match_budget, unsafe_no_sandbox


@functools.lru_cache(maxsize=1)
def sandbox_status() -> dict[str, Any]:
    """Can this runner sandbox a bot (probed once per process)? ``ok``, the backend, a line
    saying why not, and whether the limits hold per bot or per process."""
    backend = os.environ.get("BIDEL_SANDBOX", "bubblewrap")
    status: dict[str, Any] = {
        "backend": backend,
        "limits": per_bot_limits(),
        "packages": runtime.describe(),
    }
    if (
        unsafe_no_sandbox()
    ):  # an operator's explicit choice for a development machine, said out loud
        return {
            **status,
            "ok": True,
            "backend": "none",
            "detail": "UNSANDBOXED: BIDEL_UNSAFE_NO_SANDBOX is set (development only)",
        }
    try:
        default_launcher(backend=backend)
    except SandboxUnavailable as exc:
        return {**status, "ok": False, "detail": str(exc)}
    return {**status, "ok": True, "detail": "bots are sandboxed"}


@inspect_command(name="bidel_sandbox")
def bidel_sandbox(state: Any, **_: Any) -> dict[str, Any]:
    """Remote control: this worker's sandbox status (``celery inspect bidel_sandbox``, for an
    operator; ``/api/health/`` reads the heartbeats instead)."""
    queues = [q.name for q in state.consumer.task_consumer.queues] if state.consumer else []
    return {**sandbox_status(), "queues": queues}


#: This process's heart (a worker's main process: its pool's children have none).
_heart: heartbeat.Heart | None = None


@worker_ready.connect
def _start_heartbeat(sender: Any = None, **_: Any) -> None:
    """A worker, platform or runner, beats once it consumes (``hearts_runner.heartbeat``)."""
    global _heart
    if _heart is not None or sender is None:
        return
    queues = sorted(q.name for q in sender.task_consumer.queues)

    def describe() -> dict[str, Any]:
        return {"queues": queues, "sandbox": sandbox_status(), "pid": os.getpid()}

    _heart = heartbeat.Heart(heartbeat.store_from_environment(), sender.hostname, describe)
    _heart.start()


@worker_shutdown.connect
def _stop_heartbeat(**_: Any) -> None:
    global _heart
    if _heart is not None:
        _heart.stop()
        _heart = None


def _identity(data: Any) -> tuple[str, int, str]:
    """Kind, reference and claim of a job, as far as a malformed one says."""
    if not isinstance(data, dict):
        return "match", 0, ""
    try:
        return str(data.get("kind", "match")), int(data.get("ref", 0)), str(data.get("claim", ""))
    except (TypeError, ValueError):
        return "match", 0, ""


@shared_task(name="runner.play", bind=True)
def play(self: Any, job: dict[str, Any]) -> dict[str, Any]:
    """Play one job and send its result to the platform (``arena.job_finished``)."""
    return _play(self.request.hostname or socket.gethostname(), job, budget=match_budget())


@shared_task(name="runner.play_person", bind=True, acks_late=False)
def play_person(self: Any, job: dict[str, Any]) -> dict[str, Any]:
    """A job with a person at the table: the same, acknowledged as it starts (it may run for
    hours; see :func:`arena.services.dispatch._send_job`), bounded by its person's limits
    instead of a budget."""
    return _play(self.request.hostname or socket.gethostname(), job)


def _play(runner: str, job: dict[str, Any], budget: float | None = None) -> dict[str, Any]:
    try:
        parsed = Job.from_dict(job)
    except JobError as exc:
        kind, ref, claim = _identity(job)
        result = JobResult(kind, ref, claim, False, cause="job", error=str(exc), runner=runner)
    else:
        current_app.send_task(
            "arena.job_started", args=[parsed.kind, parsed.ref, parsed.claim], queue=PLATFORM_QUEUE
        )
        publish = live.publisher_for(
            parsed.kind, parsed.ref, parsed.claim, wanted=bool(parsed.live)
        )
        people = live.people_for(parsed.claim, parsed.person, coach=parsed.coach)
        result = run_job(
            parsed,
            unsafe=unsafe_no_sandbox(),
            runner=runner,
            publish=publish,
            people=people,
            budget=budget,
        )
        result = with_luck(result)  # (a match's: what its deals alone were worth to each seat)
    current_app.send_task("arena.job_finished", args=[result.to_dict()], queue=PLATFORM_QUEUE)
    return {"kind": result.kind, "ref": result.ref, "ok": result.ok, "cause": result.cause}


@shared_task(name="runner.analyse", bind=True)
def analyse(self: Any, job: dict[str, Any]) -> dict[str, Any]:
    """Analyse a stored game's seat (:func:`bots_sdk.analysis.run_analysis`: no bot runs, no
    sandbox needed) and send the report to the platform (``arena.job_finished``)."""
    result = run_analysis(job, runner=self.request.hostname or socket.gethostname())
    current_app.send_task("arena.job_finished", args=[result.to_dict()], queue=PLATFORM_QUEUE)
    return {"kind": result.kind, "ref": result.ref, "ok": result.ok, "cause": result.cause}
