"""The REST API: validate input, call one service or selector, render. Nothing else."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, mixins, permissions, status, viewsets
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import exception_handler

from arena import logins, selectors, services, tournaments
from arena.api import serializers as s
from arena.api.filters import BotFilter, MatchFilter, TournamentFilter
from arena.uploads import UploadError, read_upload
from engine.rules import RulesError

#: An id in a query or a path: 1 to 18 ASCII digits (within a signed 64-bit integer), no sign.
ID_PATTERN = r"[1-9][0-9]{0,17}"
_ID = re.compile(rf"\A{ID_PATTERN}\Z")


def id_param(params: Any, name: str) -> int | None:
    """A query parameter that names a row: absent (None), or an id; anything else is a 400
    (``²`` is a digit to ``str.isdigit`` but not to ``int``; 23 digits overflow a column)."""
    value = params.get(name)
    if value in (None, ""):
        return None
    if not _ID.match(value):
        raise exceptions.ValidationError({name: "must be an id: a whole number from 1"})
    return int(value)


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Domain errors become 4xx JSON a person can act on."""
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else {"detail": exc.messages}
        exc = exceptions.ValidationError(detail)
    elif isinstance(exc, (UploadError, RulesError)):
        exc = exceptions.ValidationError({"detail": str(exc)})
    elif isinstance(exc, PermissionError):
        exc = exceptions.PermissionDenied(str(exc))
    response = exception_handler(exc, context)
    if response is not None:
        response.data = error_body(response.data)
    return response


def error_body(data: Any) -> dict[str, list[str]]:
    """Every error in one shape: field → list of messages, ``detail`` for what concerns no
    one field (DRF alone gives ``{"detail": "…"}`` for some errors, lists for others).

    >>> error_body({"detail": "Not found."})
    {'detail': ['Not found.']}
    >>> error_body({"non_field_errors": ["no"], "name": "taken", "seats": {1: ["who?"]}})
    {'detail': ['no'], 'name': ['taken'], 'seats': ['item 2: who?']}
    >>> error_body(["a", "b"])
    {'detail': ['a', 'b']}
    """
    if not isinstance(data, dict):
        data = {"detail": data}
    body: dict[str, list[str]] = {}
    for field, messages in data.items():
        key = "detail" if field == "non_field_errors" else str(field)
        body.setdefault(key, []).extend(_sentences(messages))
    return body


def _sentences(messages: Any) -> list[str]:
    """Messages as sentences; a list field's per-item errors as ``item N: …`` (N from 1), as
    the forms say them.

    >>> _sentences({0: ["no such bot"]}), _sentences("Not found.")
    (['item 1: no such bot'], ['Not found.'])
    """
    if isinstance(messages, dict):
        return [
            f"item {int(k) + 1}: {m}" if str(k).isdigit() else f"{k}: {m}"
            for k, value in messages.items()
            for m in _sentences(value)
        ]
    if isinstance(messages, list):
        return [m for item in messages for m in _sentences(item)]
    return [str(messages)]


class UserViewSet(mixins.CreateModelMixin, viewsets.GenericViewSet):
    """Sign up: ``POST /api/users/`` {username, password}; throttled per address."""

    permission_classes = [permissions.AllowAny]
    serializer_class = s.UserCreateSerializer
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "signup"

    @extend_schema(request=s.UserCreateSerializer, responses={201: s.UserSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        data = s.UserCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = services.user_create(**data.validated_data)
        return Response(s.UserSerializer(user).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses={200: s.MeSerializer})
    @action(
        detail=False,
        methods=["get"],
        permission_classes=[permissions.IsAuthenticated],
        throttle_classes=[],
    )
    def me(self, request: Request) -> Response:
        """The signed-in user and their bots."""
        return Response(s.MeSerializer(request.user).data)


class TokenView(ObtainAuthToken):
    """Log in: ``POST /api/token/`` {username, password} → {token}. Throttled per address,
    and a username that failed too often from an address is refused without a password check
    (:mod:`arena.logins`, shared with the log-in form)."""

    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "login"

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        data = request.data if isinstance(request.data, Mapping) else {}
        username, address = str(data.get("username", "")), logins.client_address(request)
        wait = logins.login_wait(username, address)
        if wait:
            refused = exceptions.Throttled(detail=logins.too_many_message(wait))
            refused.wait = wait  # the Retry-After header
            raise refused
        check = self.get_serializer(data=request.data)
        try:
            check.is_valid(raise_exception=True)
        except exceptions.ValidationError:
            logins.login_failed(username, address)
            raise
        logins.login_succeeded(username, address)
        token = services.token_obtain(user=check.validated_data["user"])
        return Response({"token": token.key})


class IsOwnerOrReadOnly(permissions.BasePermission):
    def has_object_permission(self, request: Request, view: Any, obj: Any) -> bool:
        return request.method in permissions.SAFE_METHODS or obj.owner_id == request.user.pk


class BotViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Bots: anyone reads; a signed-in user creates; the owner uploads versions, changes
    the description (PATCH) and retires the bot (DELETE)."""

    lookup_value_regex = ID_PATTERN
    serializer_class = s.BotSerializer
    filter_backends = [DjangoFilterBackend]
    filterset_class = BotFilter
    permission_classes = [permissions.IsAuthenticatedOrReadOnly, IsOwnerOrReadOnly]

    def get_queryset(self) -> Any:
        return selectors.bots()

    @extend_schema(request=s.BotSerializer, responses={201: s.BotSerializer})
    def create(self, request: Request) -> Response:
        data = s.BotSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        bot = services.bot_create(owner=request.user, **data.validated_data)
        return Response(s.BotSerializer(bot).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=s.BotUpdateSerializer, responses={200: s.BotSerializer})
    def partial_update(self, request: Request, pk: str | None = None) -> Response:
        """The owner changes the description or the ladders the bot joins."""
        bot = self.get_object()
        data = s.BotUpdateSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        bot = services.bot_update(bot=bot, user=request.user, **data.validated_data)
        return Response(s.BotSerializer(bot).data)

    @extend_schema(request=None, responses={204: None})
    def destroy(self, request: Request, pk: str | None = None) -> Response:
        """Retire the bot: it plays no more; its matches, ratings and history stay (a new
        version brings it back)."""
        services.bot_retire(bot=self.get_object(), user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        methods=["POST"],
        request={"multipart/form-data": s.VersionUploadSerializer},
        responses={201: s.VersionOwnerSerializer},
    )
    @extend_schema(methods=["GET"], responses={200: s.VersionSerializer(many=True)})
    @action(detail=True, methods=["get", "post"], url_path="versions")
    def versions(self, request: Request, pk: str | None = None) -> Response:
        bot = self.get_object()
        if request.method == "GET":  # paged, as every list
            page = self.paginate_queryset(selectors.bot_versions(bot))
            return self.get_paginated_response(s.VersionSerializer(page, many=True).data)
        upload = s.VersionUploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        file = upload.validated_data["file"]
        data = read_upload(file)
        version = services.version_upload(bot=bot, user=request.user, filename=file.name, data=data)
        return Response(s.VersionOwnerSerializer(version).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses={200: s.VersionOwnerSerializer})
    @action(detail=True, methods=["get"], url_path=r"versions/(?P<number>[0-9]{1,9})")
    def version(
        self, request: Request, pk: str | None = None, number: str | None = None
    ) -> Response:
        bot = self.get_object()
        version = selectors.version_get(bot=bot, number=int(number or 0))
        logs = selectors.can_see_logs(request.user, bot)  # the validation log
        return Response((s.VersionOwnerSerializer if logs else s.VersionSerializer)(version).data)


class LadderViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Ladders, their entries and rankings."""

    lookup_value_regex = ID_PATTERN
    serializer_class = s.LadderSerializer
    permission_classes = [permissions.IsAuthenticatedOrReadOnly]

    def get_queryset(self) -> Any:
        return selectors.ladders()

    @extend_schema(request=s.EntryCreateSerializer, responses={201: None})
    @action(detail=True, methods=["post"])
    def entries(self, request: Request, pk: str | None = None) -> Response:
        ladder = self.get_object()
        data = s.EntryCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        bot = selectors.bot_get(data.validated_data["bot"])
        entry, created = services.ladder_enter(ladder=ladder, bot=bot, user=request.user)
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response({"entry": entry.pk, "bot": bot.pk, "ladder": ladder.pk}, status=code)

    @extend_schema(responses={200: s.RankingSerializer(many=True)})
    @action(detail=True, methods=["get"], pagination_class=None)  # one unpaginated list
    def rankings(self, request: Request, pk: str | None = None) -> Response:
        return Response(selectors.ladder_rankings(self.get_object()))


class MatchViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Matches: anyone reads them and their records; a signed-in user asks for challenges."""

    lookup_value_regex = ID_PATTERN
    serializer_class = s.MatchSerializer
    permission_classes = [permissions.IsAuthenticatedOrReadOnly]
    throttle_scope = "challenges"

    def get_throttles(self) -> list[Any]:
        return [ScopedRateThrottle()] if self.action == "create" else []

    filter_backends = [DjangoFilterBackend]
    filterset_class = MatchFilter

    def get_queryset(self) -> Any:
        return selectors.matches()  # (filtered by MatchFilter: the schema lists each filter)

    @extend_schema(request=s.ChallengeSerializer, responses={201: s.MatchSerializer})
    def create(self, request: Request) -> Response:
        data = s.ChallengeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        match = services.challenge_create(
            user=request.user,
            seats=values["seats"],
            rules=values["rules"],
            hands=values.get("hands"),
        )
        return Response(s.MatchSerializer(match).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses={200: dict})
    @action(detail=True, methods=["get"])
    def record(self, request: Request, pk: str | None = None) -> Response:
        match = self.get_object()
        if match.record is None:
            raise exceptions.NotFound("the match has not finished")
        record = {k: v for k, v in match.record.items() if k != "seats"}
        for seat in record.get("seats", []):
            seat.pop("stderr", None)
        return Response(record)

    @extend_schema(responses={200: dict})
    @action(detail=True, methods=["get"], permission_classes=[permissions.IsAuthenticated])
    def logs(self, request: Request, pk: str | None = None) -> Response:
        match = self.get_object()
        own = selectors.match_logs(selectors.match_seats(match), request.user)
        return Response({"match": match.pk, "seats": own})


class TournamentViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Tournaments: anyone reads them and their standings; staff create, start and cancel."""

    lookup_value_regex = ID_PATTERN
    serializer_class = s.TournamentSerializer
    permission_classes = [permissions.IsAuthenticatedOrReadOnly]

    filter_backends = [DjangoFilterBackend]
    filterset_class = TournamentFilter

    def get_queryset(self) -> Any:
        return selectors.tournaments()

    def _staff(self, request: Request) -> None:
        if not (request.user.is_authenticated and request.user.is_staff):
            raise exceptions.PermissionDenied("only staff run tournaments")

    @extend_schema(request=s.TournamentCreateSerializer, responses={201: s.TournamentSerializer})
    def create(self, request: Request) -> Response:
        self._staff(request)
        data = s.TournamentCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        if "ladder" in values:
            values["ladder"] = selectors.ladder_get(values["ladder"])
        tournament = tournaments.tournament_create(created_by=request.user, **values)
        return Response(s.TournamentSerializer(tournament).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: s.TournamentSerializer})
    @action(detail=True, methods=["post"])
    def start(self, request: Request, pk: str | None = None) -> Response:
        self._staff(request)
        tournament = self.get_object()
        tournaments.tournament_start(tournament_id=tournament.pk)
        return Response(s.TournamentSerializer(selectors.tournament_get(tournament.pk)).data)

    @extend_schema(request=None, responses={200: s.TournamentSerializer})
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str | None = None) -> Response:
        self._staff(request)
        tournament = tournaments.tournament_cancel(tournament_id=self.get_object().pk)
        return Response(s.TournamentSerializer(tournament).data)

    @extend_schema(responses={200: s.StandingSerializer(many=True)})
    @action(detail=True, methods=["get"], pagination_class=None)  # one unpaginated list
    def standings(self, request: Request, pk: str | None = None) -> Response:

        return Response(selectors.tournament_standings(self.get_object()))
