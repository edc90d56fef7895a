"""The `standard` ladder (4 players, standard rules), with the built-ins as its reference
entries, exists right after `migrate`."""

from django.db import migrations

BUILTINS = ("random", "low", "heuristic", "montecarlo")


def create(apps, schema_editor):
    Ladder = apps.get_model("arena", "Ladder")
    LadderEntry = apps.get_model("arena", "LadderEntry")
    ladder, _ = Ladder.objects.get_or_create(
        name="standard", defaults={"rules": "standard", "table_size": 4, "concurrency": 4}
    )
    for name in BUILTINS:
        LadderEntry.objects.get_or_create(ladder=ladder, builtin=name)


def remove(apps, schema_editor):
    apps.get_model("arena", "Ladder").objects.filter(name="standard").delete()


class Migration(migrations.Migration):
    dependencies = [("arena", "0001_initial")]
    operations = [migrations.RunPython(create, remove)]
