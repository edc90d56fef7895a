"""Records stored before the ``direction`` setting keep replaying.

The seed-001 presets (``persian``, ``black_lady_54``, ``black_lady_40``, ``hokm_40``) now play
counter-clockwise (RULES.md §7, docs/engine.md): their first pass goes to the next player and
the new hakem sits after the queen's taker. A game stored before was played the other way, and
its record names only the preset, so it would no longer replay. Each such finished match gets
the setting it was really played under written into its rules and its record, clockwise
(checked by replaying the record; one that does not replay either way is left as it is). At
5 to 7 players these presets pass as before (docs/engine.md): nothing changes there.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import migrations

from engine.record import verify
from engine.rules import RuleSet, RulesError

log = logging.getLogger(__name__)
PRESETS = {"persian", "black_lady_54", "black_lady_40", "hokm_40"}


def _played_under(record: dict[str, Any]) -> dict[str, Any] | None:
    """The setting the record was played under when its preset's new reading does not
    replay it; None when there is nothing to change or the old reading does not replay it
    either."""
    try:
        rules = RuleSet.from_spec(record.get("rules"))
    except (RulesError, TypeError, ValueError):
        return None
    if rules.preset not in PRESETS or rules.direction != "counterclockwise":
        return None
    if verify(record)["valid"]:
        return None  # (no pass and no hakem told the two readings apart)
    overrides = {"direction": "clockwise"}
    if verify({**record, "rules": _with(record["rules"], overrides)})["valid"]:
        return overrides
    return None


def _with(spec: Any, overrides: dict[str, Any]) -> dict[str, Any]:
    rules = RuleSet.from_spec(spec)
    return rules.with_overrides(**overrides).to_spec()


def forwards(apps: Any, schema_editor: Any) -> None:
    Match = apps.get_model("arena", "Match")
    candidates = [
        pk
        for pk, rules in Match.objects.filter(record__isnull=False).values_list("pk", "rules")
        for name in [rules if isinstance(rules, str) else (rules or {}).get("preset")]
        if name in PRESETS
    ]
    for match in Match.objects.filter(pk__in=candidates).only("pk", "rules", "record"):
        if not isinstance(match.record, dict):
            continue
        overrides = _played_under(match.record)
        if overrides is None:
            continue
        match.record = {**match.record, "rules": _with(match.record["rules"], overrides)}
        match.rules = _with(match.rules, overrides)
        match.save(update_fields=["record", "rules"])
        log.info("match %s: its record now names the direction it was played in", match.pk)


class Migration(migrations.Migration):
    dependencies = [("arena", "0013_participants_bot_or_builtin")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
