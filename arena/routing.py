"""WebSocket routes (the ASGI counterpart of urls.py)."""

from django.urls import path

from arena.consumers import MatchLiveConsumer, PlayConsumer

websocket_urlpatterns = [
    path("ws/matches/<int:match_id>/live/", MatchLiveConsumer.as_asgi()),
    path("ws/play/<str:token>/", PlayConsumer.as_asgi()),
]
