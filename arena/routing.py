"""WebSocket routes (the ASGI counterpart of urls.py)."""

from django.urls import path, re_path

from arena.consumers import MatchLiveConsumer, NoSuchSocket, PlayConsumer

websocket_urlpatterns = [
    path("ws/matches/<int:match_id>/live/", MatchLiveConsumer.as_asgi()),
    # A person's seat by its game's public number; the seat's secret is its cookie, never in
    # the address (an address is written in access logs).
    path("ws/play/<int:match_id>/", PlayConsumer.as_asgi()),
    re_path(r"", NoSuchSocket.as_asgi()),  # any other path (the old /ws/play/<secret>/ too)
]
