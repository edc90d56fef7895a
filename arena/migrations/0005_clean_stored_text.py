"""Clean what bots wrote into the JSON columns before arena.text guarded every write: SQLite
stored a surrogate escaped in JSON (``\\ud800``), and every page or API answer showing it then
failed to encode. PostgreSQL refused such rows outright, so there it finds nothing to do."""

from django.db import migrations
from django.db.models import Q, TextField
from django.db.models.functions import Cast

# What json.dumps writes for U+0000 and for a surrogate (U+D800..U+DFFF).
SUSPECT = ["\\u0000", *(f"\\ud{c}" for c in "89abcdef")]


def clean_stored_text(apps, schema_editor):
    from arena.text import clean_json

    for model, column in (("Match", "record"), ("MatchSeat", "faults")):
        rows = apps.get_model("arena", model).objects.annotate(text=Cast(column, TextField()))
        suspect = Q()
        for escape in SUSPECT:
            suspect |= Q(text__icontains=escape)
        for row in rows.filter(suspect).only("pk", column).iterator():
            value = getattr(row, column)
            cleaned = clean_json(value)
            if cleaned != value:
                setattr(row, column, cleaned)
                row.save(update_fields=[column])


class Migration(migrations.Migration):

    dependencies = [
        ("arena", "0004_rating_history"),
    ]

    operations = [migrations.RunPython(clean_stored_text, migrations.RunPython.noop)]
