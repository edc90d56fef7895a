"""ASGI entry point (uvicorn in `make demo` and compose): Django's pages and API over HTTP,
and the live WebSockets (:mod:`arena.routing`) through Django Channels."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hearts_platform.settings")

http = get_asgi_application()  # first: it sets Django up before the consumers are imported

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402

from arena.routing import websocket_urlpatterns  # noqa: E402
from hearts_platform.body_limit import BodyLimit  # noqa: E402
from hearts_platform.origin import SameOriginValidator  # noqa: E402

application = ProtocolTypeRouter(
    {
        # A body past REQUEST_BODY_MAX_BYTES (or slower than REQUEST_BODY_SECONDS) is refused
        # before Django reads it; a WebSocket message's bound is uvicorn's --ws-max-size.
        "http": BodyLimit(
            http,
            max_bytes=settings.REQUEST_BODY_MAX_BYTES,
            seconds=settings.REQUEST_BODY_SECONDS,
        ),
        # A handshake from another site's page (scheme, host and port) is refused first.
        "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
