"""The WSGI module as gunicorn loads it: the app, its URLconf and views loaded, and the
objects of that start-up frozen out of the collector's full passes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import child_env, run_python


def test_wsgi_loads_the_app_and_freezes_its_start_up_objects(tmp_path: Path) -> None:
    code = (
        "import gc, json, sys\n"
        "import hearts_platform.wsgi\n"
        "walked = sum(len(gc.get_objects(generation=g)) for g in range(3))\n"
        "print(json.dumps({'frozen': gc.get_freeze_count(), 'walked': walked,\n"
        "                  'views': 'arena.web' in sys.modules}))\n"
    )
    completed = run_python(code, child_env({"BIDEL_VAR_DIR": str(tmp_path)}))
    assert completed.returncode == 0, completed.stderr
    found = json.loads(completed.stdout)
    assert found["views"] and found["frozen"] > 50_000
    assert found["walked"] < found["frozen"] / 10  # what a full pass still walks
