"""``makemessages`` that also finds the upload check's messages (``arena.uploads._say``), as
Django's documentation suggests for extra keywords."""

from django.core.management.commands import makemessages


class Command(makemessages.Command):
    xgettext_options = [*makemessages.Command.xgettext_options, "--keyword=_say"]
