"""The strength levels (``strong-1`` to ``strong-3``) and the top reference (``strong``)
enter every ladder as built-ins, as :func:`arena.services.ladder_add_builtins` enters the
built-ins of a new one."""

from django.db import migrations

BUILTINS = ("strong-1", "strong-2", "strong-3", "strong")


def enter(apps, schema_editor):
    Ladder = apps.get_model("arena", "Ladder")
    LadderEntry = apps.get_model("arena", "LadderEntry")
    for ladder in Ladder.objects.all():
        for name in BUILTINS:
            LadderEntry.objects.get_or_create(ladder=ladder, builtin=name)


def leave(apps, schema_editor):
    apps.get_model("arena", "LadderEntry").objects.filter(builtin__in=BUILTINS).delete()


class Migration(migrations.Migration):
    dependencies = [("arena", "0025_version_control")]
    operations = [migrations.RunPython(enter, leave)]
