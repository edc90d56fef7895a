from django.apps import AppConfig


class ArenaConfig(AppConfig):
    name = "arena"
    verbose_name = "Bidel arena"
    default_auto_field = "django.db.models.BigAutoField"
