"""The REST API: validate input, call one service or selector, render. Nothing else."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpResponse
from django.utils.http import content_disposition_header
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, mixins, permissions, status, viewsets
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView, exception_handler

from arena import logins, selectors, services
from arena.api import serializers as s
from arena.api.filters import BotFilter, MatchFilter, TournamentFilter
from arena.api.pagination import CappedPagination
from arena.api.parsers import PARSER_CLASSES, body_refusal
from arena.api.renderers import JSONRenderer
from arena.api.throttles import (
    ComparisonThrottle,
    PasswordCheckThrottle,
    PasswordResetEmailThrottle,
    analysis_throttle_check,
    upload_allowance,
    upload_refused,
    upload_throttle_check,
)
from arena.errors import error_messages
from arena.models import ApiToken
from arena.services import accounts, comparisons, tournaments
from arena.uploads import UploadError, read_upload
from bots_sdk.analysis import SAMPLES as ANALYSIS_SAMPLES
from bots_sdk.ids import ID_PATTERN, parse_id

logger = logging.getLogger(__name__)


def id_param(params: Any, name: str) -> int | None:
    """A query parameter that names a row: absent (None), or an id; anything else is a 400
    (``²`` is a digit to ``str.isdigit`` but not to ``int``; 23 digits overflow a column)."""
    value = params.get(name)
    if value in (None, ""):
        return None
    found = parse_id(value)
    if found is None:
        raise exceptions.ValidationError({name: "must be an id: a whole number from 1"})
    return found


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Domain errors become 4xx JSON a person can act on (:func:`arena.errors.error_messages`,
    as the pages say them)."""
    messages = error_messages(exc)  # (the same words as the pages')
    if messages is not None:
        exc = exceptions.ValidationError(messages)
    elif isinstance(exc, PermissionError):
        exc = exceptions.PermissionDenied(str(exc))
    exc = body_refusal(exc) or exc  # Django's refusals of a body, met where DRF reads it
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


#: The errors the account endpoints may answer with, in the one shape.
_ERRORS = {
    400: OpenApiResponse(s.ERROR_SCHEMA, description="bad input, field by field"),
    401: OpenApiResponse(
        s.ERROR_SCHEMA, description="no token, or one that is unknown, expired or revoked"
    ),
    429: OpenApiResponse(s.ERROR_SCHEMA, description="throttled (see Retry-After)"),
}


class UserViewSet(mixins.CreateModelMixin, viewsets.GenericViewSet):
    """Sign up: ``POST /api/users/`` {username, password, email?}; throttled per address."""

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

    def get_throttles(self) -> list[Any]:
        if self.action == "me":  # a change checks the password: the log-in's allowance
            return [PasswordCheckThrottle()] if self.request.method == "PATCH" else []
        return super().get_throttles()

    @extend_schema(methods=["GET"], responses={200: s.MeSerializer})
    @extend_schema(
        methods=["PATCH"],
        request=s.MeUpdateSerializer,
        responses={200: s.MeSerializer, 400: _ERRORS[400], 429: _ERRORS[429]},
    )
    @action(
        detail=False, methods=["get", "patch"], permission_classes=[permissions.IsAuthenticated]
    )
    def me(self, request: Request) -> Response:
        """The signed-in user and their bots; PATCH {email, password} changes the address a
        password reset is sent to (the current password is asked for)."""
        if request.method == "PATCH":
            data = s.MeUpdateSerializer(data=request.data)
            data.is_valid(raise_exception=True)
            # A password check: the log-in's lock-out too (a stolen session guessing it).
            username, address = request.user.get_username(), logins.client_address(request)
            wait = logins.login_wait(username, address)
            if wait:
                refused = exceptions.Throttled(detail=logins.too_many_message(wait))
                refused.wait = wait  # the Retry-After header
                raise refused
            try:
                services.user_email_set(user=request.user, **data.validated_data)
            except DjangoValidationError:
                logins.login_failed(username, address)
                raise
        return Response(s.MeSerializer(request.user).data)


def _user_agent(request: Request) -> str:
    """The client, as it names itself: what a token is called when its maker gives no name."""
    return str(request.META.get("HTTP_USER_AGENT", ""))[:64]


def _issued(token: ApiToken, key: str) -> Response:
    """A new token's answer: its key, shown this once, and what the list shows of it."""
    return Response({"token": key, **s.ApiTokenSerializer(token).data})


class TokenView(APIView):
    """Log in: ``POST /api/token/`` {username, password, name?} → {token, id, name, prefix,
    created, last_used, expires}: a new token each time, working for ``API_TOKEN_DAYS``.
    Throttled per address, and a username that failed too often from an address is refused
    without a password check (:mod:`arena.logins`, shared with the log-in form)."""

    permission_classes = [permissions.AllowAny]
    authentication_classes: list[Any] = []  # credentials in the body, nothing else
    parser_classes = PARSER_CLASSES
    renderer_classes = [JSONRenderer]
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "login"

    @extend_schema(
        request=s.TokenObtainSerializer,
        responses={200: s.TokenIssuedSerializer, 400: _ERRORS[400], 429: _ERRORS[429]},
    )
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        data = request.data if isinstance(request.data, Mapping) else {}
        named = s.TokenNameSerializer(data=data)
        named.is_valid(raise_exception=True)  # before the password: not a failed log-in
        username, address = str(data.get("username", "")), logins.client_address(request)
        wait = logins.login_wait(username, address)
        if wait:
            refused = exceptions.Throttled(detail=logins.too_many_message(wait))
            refused.wait = wait  # the Retry-After header
            raise refused
        check = AuthTokenSerializer(data=request.data, context={"request": request})
        try:
            check.is_valid(raise_exception=True)
        except exceptions.ValidationError:
            logins.login_failed(username, address)
            raise
        logins.login_succeeded(username, address)
        name = named.validated_data.get("name") or _user_agent(request)
        token, key = services.token_create(user=check.validated_data["user"], name=name)
        return _issued(token, key)


class TokenRenewView(APIView):
    """``POST /api/token/renew/`` with ``Authorization: Token <key>``: a fresh key (same name,
    same expiry: a renewal never extends a token's life past the log-in that made it) for the
    one presented, which stops working. An expired or revoked token cannot be renewed: log in
    again."""

    permission_classes = [permissions.IsAuthenticated]
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "token"

    @extend_schema(request=None, responses={200: s.TokenIssuedSerializer, **_ERRORS})
    def post(self, request: Request) -> Response:
        if not isinstance(request.auth, ApiToken):
            raise exceptions.ValidationError(
                {"detail": "present the token to renew: Authorization: Token <key>"}
            )
        token, key = services.token_renew(token=request.auth)
        return _issued(token, key)


class TokenListView(APIView):
    """The caller's working API tokens (``GET /api/tokens/``: never a key), and
    ``DELETE /api/tokens/``: revoke all of them but the one presented."""

    permission_classes = [permissions.IsAuthenticated]
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "tokens"

    @extend_schema(responses={200: s.ApiTokenSerializer(many=True), **_ERRORS})
    def get(self, request: Request) -> Response:
        # At most API_TOKENS_PER_USER: one unpaginated list.
        return Response(s.ApiTokenSerializer(selectors.api_tokens_of(request.user), many=True).data)

    @extend_schema(
        operation_id="tokens_revoke_others",
        request=None,
        responses={200: s.TokensRevokedSerializer, **_ERRORS},
    )
    def delete(self, request: Request) -> Response:
        keep = request.auth if isinstance(request.auth, ApiToken) else None
        return Response({"revoked": services.tokens_revoke(user=request.user, keep=keep)})


class TokenDetailView(APIView):
    """``DELETE /api/tokens/{id}/``: revoke one of the caller's tokens (the one presented too:
    a log-out). Another user's token is no such token (404)."""

    permission_classes = [permissions.IsAuthenticated]
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "tokens"

    @extend_schema(
        operation_id="tokens_revoke",
        parameters=[OpenApiParameter("id", int, OpenApiParameter.PATH, description="its id")],
        request=None,
        responses={204: None, 404: OpenApiResponse(s.ERROR_SCHEMA, "no such token"), **_ERRORS},
    )
    def delete(self, request: Request, **path: str) -> Response:
        token = selectors.api_token_get(user=request.user, token_id=int(path["id"]))
        services.token_revoke(token=token)
        return Response(status=status.HTTP_204_NO_CONTENT)


#: What a reset request is answered, whether or not an account has the address.
RESET_SENT = (
    "if an account has this address, a link to choose a new password was sent to it; "
    "it works once, for a day"
)


class PasswordResetView(APIView):
    """``POST /api/password-reset/`` {email}: mail a one-use link to choose a new password to
    the accounts that have the address. The same answer whether or not one does; throttled
    per client address and per e-mail address."""

    permission_classes = [permissions.AllowAny]
    authentication_classes: list[Any] = []
    throttle_classes = [ScopedRateThrottle, PasswordResetEmailThrottle]
    throttle_scope = "password_reset"

    @extend_schema(
        request=s.PasswordResetSerializer,
        responses={
            200: s.DetailSerializer,
            400: _ERRORS[400],
            429: _ERRORS[429],
            503: OpenApiResponse(
                s.ERROR_SCHEMA, description="resets are off: the site's address is not set"
            ),
        },
    )
    def post(self, request: Request) -> Response:
        data = s.PasswordResetSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            domain, https = accounts.reset_origin(
                host=request.get_host(), secure=request.is_secure()
            )
        except accounts.ResetUnavailable as exc:
            logger.error("a password reset was refused: %s", exc)
            return Response({"detail": [str(exc)]}, status=503)
        services.password_reset_request(
            email=data.validated_data["email"], domain=domain, use_https=https
        )
        return Response({"detail": RESET_SENT})


class PasswordResetConfirmView(APIView):
    """``POST /api/password-reset/confirm/`` {uid, token, new_password}: the link's two parts
    and the new password (Django's validators). Every API token of the account is revoked and
    its sessions end; the link works no more."""

    permission_classes = [permissions.AllowAny]
    authentication_classes: list[Any] = []
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "password_reset"

    @extend_schema(
        request=s.PasswordResetConfirmSerializer,
        responses={200: s.DetailSerializer, 400: _ERRORS[400], 429: _ERRORS[429]},
    )
    def post(self, request: Request) -> Response:
        data = s.PasswordResetConfirmSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        services.password_reset_confirm(
            uid=values["uid"], token=values["token"], password=values["new_password"]
        )
        return Response({"detail": "the password was changed: log in with it"})


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
        responses={
            201: s.VersionOwnerSerializer,
            400: OpenApiResponse(
                s.ERROR_SCHEMA, description="a bad file, or UPLOAD_MAX_WAITING versions waiting"
            ),
            429: OpenApiResponse(
                s.ERROR_SCHEMA, description="UPLOAD_RATE or BOT_UPLOAD_RATE reached (Retry-After)"
            ),
        },
    )
    @extend_schema(methods=["GET"], responses={200: s.VersionSerializer(many=True)})
    @action(detail=True, methods=["get", "post"], url_path="versions")
    def versions(self, request: Request, pk: str | None = None) -> Response:
        bot = self.get_object()
        if request.method == "GET":  # paged, as every list
            page = self.paginate_queryset(selectors.bot_versions(bot))
            return self.get_paginated_response(s.VersionSerializer(page, many=True).data)
        # The owner's allowance (per user, per bot, failed tries) is asked before the body is
        # parsed; the versions stored are what it counts.
        upload_throttle_check(request, bot_id=bot.pk)
        upload = s.VersionUploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        file = upload.validated_data["file"]
        try:
            version = services.version_upload(
                bot=bot,
                user=request.user,
                filename=file.name,
                data=read_upload(file),
                activation=upload.validated_data["activate"],
            )
        except (UploadError, DjangoValidationError):
            upload_refused(request)  # (a failed try: its bound, not the new versions')
            raise
        answer = dict(s.VersionOwnerSerializer(version).data)
        answer["uploads_left"] = upload_allowance(request.user, bot.pk, request).to_dict()
        return Response(answer, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=s.VersionActivateSerializer,
        responses={200: s.VersionOwnerSerializer, 400: _ERRORS[400], 401: _ERRORS[401]},
    )
    @action(detail=True, methods=["post"], url_path="activate")
    def activate(self, request: Request, pk: str | None = None) -> Response:
        """Choose the version that plays: any of the bot's versions that passed its
        validation (retired, benched, or a candidate on trial, whose trial then ends); the
        one playing retires. Its owner only."""
        bot = self.get_object()
        asked = s.VersionActivateSerializer(data=request.data)
        asked.is_valid(raise_exception=True)
        version = services.version_activate(
            bot=bot, user=request.user, number=asked.validated_data["version"]
        )
        return Response(s.VersionOwnerSerializer(version).data)

    @extend_schema(responses={200: s.VersionOwnerSerializer})
    @action(detail=True, methods=["get"], url_path=r"versions/(?P<number>[0-9]{1,9})")
    def version(
        self, request: Request, pk: str | None = None, number: str | None = None
    ) -> Response:
        bot = self.get_object()
        version = selectors.version_get(bot=bot, number=int(number or 0))
        logs = selectors.can_see_logs(request.user, bot)  # the validation log
        return Response((s.VersionOwnerSerializer if logs else s.VersionSerializer)(version).data)

    def get_throttles(self) -> list[Any]:
        if self.action == "comparisons" and self.request.method == "POST":
            return [ComparisonThrottle()]
        return super().get_throttles()

    @extend_schema(
        methods=["POST"],
        request=s.ComparisonRequestSerializer,
        responses={201: s.ComparisonSerializer, 400: _ERRORS[400], 429: _ERRORS[429]},
    )
    @extend_schema(methods=["GET"], responses={200: s.ComparisonSerializer(many=True)})
    @action(detail=True, methods=["get", "post"], url_path="comparisons")
    def comparisons(self, request: Request, pk: str | None = None) -> Response:
        """Is one version stronger than another? The bot's comparisons, newest first (each
        version made active is compared with the one before by itself); its owner asks for
        one between any two versions that have been active (``COMPARISONS_MAX_OPEN`` running
        at once; throttled)."""
        bot = self.get_object()
        if request.method == "GET":
            page = self.paginate_queryset(selectors.bot_comparisons(bot))
            return self.get_paginated_response(s.ComparisonSerializer(page, many=True).data)
        asked = s.ComparisonRequestSerializer(data=request.data)
        asked.is_valid(raise_exception=True)
        older, newer = (
            selectors.version_get(bot=bot, number=asked.validated_data[side])
            for side in ("older", "newer")
        )
        comparison = comparisons.comparison_start(
            older=older, newer=newer, requested_by=request.user
        )
        return Response(s.ComparisonSerializer(comparison).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        responses={
            (200, "application/octet-stream"): OpenApiResponse(
                description="the file as uploaded (a .py or a .zip), named in Content-Disposition"
            )
        }
    )
    @action(detail=True, methods=["get"], url_path=r"versions/(?P<number>[0-9]{1,9})/code")
    def version_code(
        self, request: Request, pk: str | None = None, number: str | None = None
    ) -> HttpResponse:
        """The code of a version, as uploaded: its owner's alone (``bidel reproduce`` runs
        it again); anyone else gets 404, as for a version that does not exist."""
        bot = self.get_object()
        if not selectors.can_see_logs(request.user, bot):
            raise exceptions.NotFound("No BotVersion matches the given query.")
        version = selectors.version_code(bot=bot, number=int(number or 0))
        response = HttpResponse(bytes(version.code), content_type="application/octet-stream")
        response["Content-Disposition"] = content_disposition_header(
            as_attachment=True, filename=version.filename
        )
        return response


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
        return Response([row.to_dict() for row in selectors.ladder_rankings(self.get_object())])


class MatchViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Matches: anyone reads them and their records; a signed-in user asks for challenges."""

    lookup_value_regex = ID_PATTERN
    serializer_class = s.MatchSerializer
    permission_classes = [permissions.IsAuthenticatedOrReadOnly]
    throttle_scope = "challenges"
    pagination_class = CappedPagination  # (a million matches: counted up to a cap)

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
        return Response(selectors.match_public_record(match))

    @extend_schema(
        parameters=[
            OpenApiParameter("seat", int, OpenApiParameter.PATH, description="the seat, from 0"),
            OpenApiParameter(
                "samples",
                int,
                description=f"deals each play is valued on (default {ANALYSIS_SAMPLES})",
            ),
        ],
        request=s.AnalysisRequestSerializer,
        responses={
            200: OpenApiResponse(
                dict, description="the analysis: status, and once done the report"
            ),
            202: OpenApiResponse(dict, description="asked for: on its way to a runner"),
            404: OpenApiResponse(s.ERROR_SCHEMA, description="not asked for yet (GET)"),
            429: OpenApiResponse(s.ERROR_SCHEMA, description="the user's allowance is spent"),
        },
    )
    @action(detail=True, methods=["get", "post"], url_path=r"analysis/(?P<seat>[0-9]{1,2})")
    def analysis(self, request: Request, seat: str, pk: str | None = None) -> Response:
        """A seat's analysis, decision by decision (``bidel analyse``'s numbers, made on the
        runners): GET reads it, POST asks for it (signed in; kept for everyone once made, and
        counted against the asker's allowance only when new). ``seat`` from 0."""
        match = self.get_object()
        data = s.AnalysisRequestSerializer(
            data=request.data if request.method == "POST" else request.query_params
        )
        data.is_valid(raise_exception=True)
        samples = data.validated_data.get("samples", ANALYSIS_SAMPLES)
        found = selectors.analysis_find(match, int(seat), samples)
        if request.method == "GET":
            if found is None:
                raise exceptions.NotFound(
                    f"seat {seat} of match {match.pk} has not been analysed with {samples} "
                    "samples: POST to this address to ask for it"
                )
            return Response(selectors.analysis_document(found))
        if found is None or found.status == found.Status.FAILED:
            analysis_throttle_check(request.user)
        analysis = services.analysis_request(
            user=request.user, match_id=match.pk, seat=int(seat), samples=samples
        )
        done = analysis.status == analysis.Status.DONE
        return Response(
            selectors.analysis_document(analysis),
            status=status.HTTP_200_OK if done else status.HTTP_202_ACCEPTED,
        )

    @extend_schema(responses={200: dict})
    @action(detail=True, methods=["get"], permission_classes=[permissions.IsAuthenticated])
    def logs(self, request: Request, pk: str | None = None) -> Response:
        match = self.get_object()
        own = selectors.match_logs(selectors.match_seats(match), request.user, match.record)
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

        rows = selectors.tournament_standings(self.get_object())
        return Response([row.to_dict() for row in rows])
