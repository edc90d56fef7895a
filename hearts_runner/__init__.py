"""The runner tier: Celery workers that play bots' matches and hold no secrets.

A runner consumes the ``runner`` queue. Each message is a self-contained job
(:mod:`bots_sdk.referee.jobs`: rules, seed, clock, limits, each seat a built-in or a bot's code with
its sha256, and a claim token); the runner plays it in the sandbox and sends the result back as an
``arena.job_finished`` task, which a platform worker stores if the claim token still holds.
A runner needs only the broker's address (``REDIS_URL``, or the embedded broker's
``BIDEL_VAR_DIR``): no database, no ``SECRET_KEY``, no Django. It refuses to start when its
environment holds either (docs/operations.md).

    celery -A hearts_runner worker --queues=runner --concurrency=2
"""
