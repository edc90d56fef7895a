"""The arena's REST API, mounted under ``/api/``."""

from django.urls import path
from rest_framework.routers import DefaultRouter

from arena.api import views

router = DefaultRouter()
router.register("users", views.UserViewSet, basename="user")
router.register("bots", views.BotViewSet, basename="bot")
router.register("ladders", views.LadderViewSet, basename="ladder")
router.register("matches", views.MatchViewSet, basename="match")
router.register("tournaments", views.TournamentViewSet, basename="tournament")

urlpatterns = [path("token/", views.TokenView.as_view(), name="token"), *router.urls]
