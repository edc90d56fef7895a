"""The Celery app: its safety settings, task naming, and real workers on both brokers."""

from __future__ import annotations

import multiprocessing
import os
import uuid
from pathlib import Path

import pytest
from django.conf import settings

from arena.tasks import ping
from hearts_platform.celery import app
from hearts_runner.broker import embedded_transport, redis_transport
from tests.hearts_platform import broker_race
from tests.support import DEADLINE, celery_worker, child_env, client_app, requires_redis


def test_app_is_configured_from_django_settings() -> None:
    conf = app.conf
    assert conf.task_serializer == "json"
    assert conf.result_serializer == "json"
    assert list(conf.accept_content) == ["json"]
    assert conf.task_acks_late is True
    assert conf.task_reject_on_worker_lost is True
    assert conf.worker_prefetch_multiplier == 1
    assert conf.task_time_limit == settings.CELERY_TASK_TIME_LIMIT
    assert conf.task_soft_time_limit == settings.CELERY_TASK_SOFT_TIME_LIMIT
    assert conf.task_soft_time_limit < conf.task_time_limit
    assert conf.beat_scheduler == "django_celery_beat.schedulers:DatabaseScheduler"
    assert conf.broker_url == settings.CELERY_BROKER_URL
    assert not conf.task_always_eager


def test_every_project_task_has_an_explicit_name() -> None:
    app.loader.import_default_modules()
    ours = {
        name: task
        for name, task in app.tasks.items()
        if task.__module__.split(".")[0] in ("arena", "hearts_platform")
    }
    assert "arena.ping" in ours
    for name, task in ours.items():
        automatic = f"{task.__module__}.{task.run.__name__}"
        assert name != automatic, f"{automatic} needs name= in its decorator"


def _round_trip(client, queue: str, worker_hostname: str) -> None:
    payload = {"seed": 123, "text": "بی‌دل"}
    result = client.send_task("arena.ping", args=[payload], queue=queue)
    reply = result.get(timeout=DEADLINE)
    assert reply["payload"] == payload
    assert reply["worker"] == worker_hostname
    assert reply["pid"] != os.getpid()  # ran in the worker's process, not eagerly here


def test_real_worker_on_the_embedded_broker(tmp_path: Path) -> None:
    queue = f"test-{uuid.uuid4().hex}"
    hostname = f"embedded-{uuid.uuid4().hex[:8]}@test"
    env = child_env({"REDIS_URL": None, "BIDEL_VAR_DIR": str(tmp_path)})
    with celery_worker(env=env, hostname=hostname, queues=[queue]) as worker:
        client = client_app(embedded_transport(tmp_path))
        assert client.conf.broker_url.startswith("filesystem://")
        try:
            _round_trip(client, queue, hostname)
        except Exception:
            print(worker.log())
            raise


@requires_redis
def test_real_worker_on_redis() -> None:
    queue = f"test-{uuid.uuid4().hex}"
    hostname = f"redis-{uuid.uuid4().hex[:8]}@test"
    with celery_worker(env=child_env(), hostname=hostname, queues=[queue]) as worker:
        client = client_app(redis_transport(settings.REDIS_URL, hard_time_limit=60))
        assert client.conf.broker_url.startswith("redis://")
        try:
            _round_trip(client, queue, hostname)
        except Exception:
            print(worker.log())
            raise


def test_task_called_directly_is_plain_python() -> None:
    # The task body is an ordinary function: callable without any broker.
    reply = ping.run("direct")
    assert reply["payload"] == "direct"
    assert reply["pid"] == os.getpid()


@pytest.mark.parametrize("transport", ["embedded", "redis"])
def test_broker_settings_functions(tmp_path: Path, transport: str) -> None:
    if transport == "embedded":
        conf = embedded_transport(tmp_path)
        assert conf["broker_url"] == "filesystem://localhost/"
        options = conf["broker_transport_options"]
        assert options["data_folder_in"] == options["data_folder_out"]
        assert Path(options["control_folder"]).is_dir()
    else:
        conf = redis_transport("redis://h:6379/1", hard_time_limit=500)
        assert conf["broker_transport_options"]["visibility_timeout"] >= 1000


def test_the_embedded_broker_never_hands_out_a_half_written_message(tmp_path: Path) -> None:
    # Kombu's own filesystem channel writes a message in place and a consumer polling at the
    # wrong moment takes it half-written: here two readers poll while a writer floods the queue.
    options = embedded_transport(tmp_path)["broker_transport_options"] | {"polling_interval": 0}
    count = 1500
    context = multiprocessing.get_context("spawn")  # no fork of a process with threads
    results = context.Queue()
    readers = [
        context.Process(target=broker_race.take, args=(options, results, DEADLINE)) for _ in "ab"
    ]
    writer = context.Process(target=broker_race.put, args=(options, count, len(readers)))
    for process in (*readers, writer):
        process.start()
    outcomes = [results.get(timeout=2 * DEADLINE) for _ in readers]
    for process in (*readers, writer):
        process.join(timeout=DEADLINE)
        assert process.exitcode == 0
    taken = [i for outcome in outcomes for i in outcome[0]]
    assert [b for outcome in outcomes for b in outcome[1]] == []
    assert sorted(taken) == list(range(count))  # each message exactly once
    for outcome in outcomes:
        assert outcome[0] == sorted(outcome[0])  # in the order they were sent
    for folder in ("data_folder_in", "processed_folder"):
        assert os.listdir(options[folder]) == []  # nothing half-written or claimed is left
