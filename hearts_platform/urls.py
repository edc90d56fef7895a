"""Top-level URLs: the admin, the API (arena's routes and health), its OpenAPI schema, and the
pages for people."""

from django.contrib import admin
from django.urls import include, path, register_converter
from django.views.i18n import JavaScriptCatalog

from arena import web
from bots_sdk.ids import ID_PATTERN
from hearts_platform.views import HealthView, SchemaView, SwaggerView


class IdConverter:
    """A row's id in a page's path (``bots_sdk.ids``): ``<int:>`` takes any run of digits,
    and one too long for its column fails in the database, not as a 404."""

    regex = ID_PATTERN

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


register_converter(IdConverter, "id")

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/health/", HealthView.as_view(), name="health"),
    path("api/schema/", SchemaView.as_view(), name="schema"),
    path("api/docs/", SwaggerView.as_view(url_name="schema"), name="docs"),
    path("api/", include("arena.urls")),
    path("", web.home, name="home"),
    path("ladders/<id:ladder_id>/", web.ladder_page, name="ladder"),
    path("tournaments/", web.tournaments_index, name="tournaments"),
    path("bots/", web.bots_index, name="bots"),
    path("bots/builtin/<str:name>/", web.builtin_page, name="builtin"),
    path("matches/", web.matches_index, name="matches"),
    path("docs/", web.docs_index, name="docs_index"),
    path("docs/<slug:name>/", web.docs_page, name="docs"),
    path("language/", web.language_choose, name="language"),
    # The replay viewer's words in the page's language (gettext() in arena/static/arena/*.js).
    path("jsi18n/", JavaScriptCatalog.as_view(packages=["arena"]), name="javascript-catalog"),
    path("bots/<id:bot_id>/", web.bot_page, name="bot"),
    path("matches/<id:match_id>/", web.match_page, name="match"),
    path("tournaments/<id:tournament_id>/", web.tournament_page, name="tournament"),
    path("signup/", web.signup, name="signup"),
    path("login/", web.login_page, name="login"),
    path("logout/", web.logout_page, name="logout"),
    path("account/", web.account, name="account"),
    path("account/tokens/<id:token_id>/revoke/", web.token_revoke, name="token_revoke"),
    path("account/email/", web.email_change, name="email_change"),
    path("password-reset/", web.PasswordResetPage.as_view(), name="password_reset"),
    path("password-reset/sent/", web.password_reset_done, name="password_reset_done"),
    path(
        "password-reset/<uidb64>/<token>/",
        web.PasswordResetConfirmPage.as_view(),
        name="password_reset_confirm",
    ),
    path("password-reset/done/", web.password_reset_complete, name="password_reset_complete"),
    path("bots/new/", web.bot_new, name="bot_new"),
    path("bots/<id:bot_id>/upload/", web.version_upload, name="version_upload"),
    path(
        "bots/<id:bot_id>/versions/<id:number>/activate/",
        web.version_activate,
        name="version_activate",
    ),
    path("challenges/new/", web.challenge_new, name="challenge_new"),
    path("play/", web.play_new, name="play_new"),
    # A person's game by its match number; the seat's secret is its cookie, never the address.
    path("play/<id:match_id>/", web.play_page, name="play"),
    path("play/<id:match_id>/leave/", web.play_leave, name="play_leave"),
    path("play/<str:token>/", web.play_old_link),  # the old /play/<secret>/: sent on, not logged
]
