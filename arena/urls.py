"""The arena's REST API, mounted under ``/api/``."""

from django.urls import path, re_path
from rest_framework.routers import DefaultRouter

from arena.api import views
from bots_sdk.ids import ID_PATTERN

# No format suffixes (`/api/bots.json`): responses are JSON whatever the path, and the views
# take no `format` argument (a POST to such a path was a 500).
router = DefaultRouter()
router.include_format_suffixes = False
router.register("users", views.UserViewSet, basename="user")
router.register("bots", views.BotViewSet, basename="bot")
router.register("ladders", views.LadderViewSet, basename="ladder")
router.register("matches", views.MatchViewSet, basename="match")
router.register("tournaments", views.TournamentViewSet, basename="tournament")

urlpatterns = [
    path("token/", views.TokenView.as_view(), name="token"),
    path("token/renew/", views.TokenRenewView.as_view(), name="token-renew"),
    path("tokens/", views.TokenListView.as_view(), name="tokens"),
    re_path(
        rf"^tokens/(?P<id>{ID_PATTERN})/$",
        views.TokenDetailView.as_view(),
        name="token-detail",
    ),
    path("password-reset/", views.PasswordResetView.as_view(), name="api-password-reset"),
    path(
        "password-reset/confirm/",
        views.PasswordResetConfirmView.as_view(),
        name="api-password-reset-confirm",
    ),
    *router.urls,
]
