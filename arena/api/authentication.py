"""``Authorization: Token <key>``: an API token (``arena.models.ApiToken``), the header DRF's
own token scheme reads, refused in words when it expired or was revoked."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from rest_framework import authentication, exceptions

from arena import selectors, services, tokens


class ApiTokenAuthentication(authentication.TokenAuthentication):
    """DRF's header parsing (``Token`` then the key; a 401 for a malformed header), our
    tokens: looked up by digest, live or refused with the reason, their last use noted."""

    keyword = "Token"

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        token = selectors.api_token_by_key(key)
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid token.")
        now = timezone.now()
        refused = tokens.refusal(
            expires=token.expires, revoked=token.revoked, revoked_why=token.revoked_why, now=now
        )
        if refused:
            raise exceptions.AuthenticationFailed(refused)
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        services.token_used(token=token, now=now)
        return token.user, token
