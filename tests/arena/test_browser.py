"""The pages in a real headless Chromium (Debian's, driven by Playwright) against the real web
server (uvicorn) and real data: every page loads and is screenshotted (desktop and phone),
passes axe-core's checks, the replay viewer steps through a match exactly as the record says
(cards, trick winners, points, scores) by mouse and by keyboard, and a bot author signs up,
uploads, and challenges through the forms while a real Celery worker does the work."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from engine.record import replay, verify
from hearts_runner.config import PEOPLE_QUEUE
from tests.arena.browser import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    GOOD_BOT,
    PASSWORD,
    PROJECT_DIR,
    Server,
    World,
    prepare_world,
    scratch_database,
    skip_without_browser,
    web_server,
)
from tests.arena.live import sandbox_env
from tests.support import DEADLINE, celery_worker, child_env

pytestmark = [pytest.mark.timeout(900), pytest.mark.browser]

#: Milliseconds a page is given for anything it awaits (Playwright counts in ms): the suite's
#: deadline; a worker's whole match or upload, twice that.
DEADLINE_MS = DEADLINE * 1000
LONG_MS = 2 * DEADLINE_MS
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
#: axe-core rule sets checked: WCAG 2.1 A and AA (contrast, labels, names, structure).
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    skip_without_browser()
    with scratch_database(tmp_path_factory.mktemp("browser")) as url:
        yield prepare_world(child_env({"DATABASE_URL": url, **sandbox_env()}))


@pytest.fixture(scope="module")
def server(world: World) -> Iterator[Server]:
    with web_server(world.env) as running:  # type: ignore[attr-defined]
        try:
            yield running
        finally:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            (ARTIFACTS / "web-server.log").write_text(running.log())


@pytest.fixture(scope="module")
def browser(world: World) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class Tab:
    """A browser page that fails its test on any script error or failed request."""

    def __init__(
        self, browser: Any, server: Server, viewport: dict[str, int], locale: str = "en-US"
    ) -> None:
        self.context = browser.new_context(
            base_url=server.url, viewport=viewport, is_mobile=viewport is PHONE, locale=locale
        )
        self.context.set_default_timeout(DEADLINE_MS)  # every wait of Playwright's, too
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.page.on("pageerror", lambda error: self.problems.append(f"script: {error}"))
        self.page.on(
            "console",
            lambda m: (
                self.problems.append(f"console: {m.text}")
                if m.type == "error" and not m.text.startswith("Failed to load resource")
                else None
            ),  # failed loads are reported with their address below
        )
        self.page.on(
            "response",
            lambda r: (
                self.problems.append(f"{r.status} {r.url}")
                if r.status >= 500 or r.status == 404
                else None
            ),
        )

    def open(self, path: str) -> Any:
        response = self.page.goto(path)
        assert response is not None and response.status == 200, (path, response)
        return response

    def shoot(self, name: str) -> None:
        folder = ARTIFACTS / "screenshots"
        folder.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(folder / f"{name}.png"), full_page=True)

    def log_in(self, username: str, password: str = PASSWORD) -> None:
        self.open("/login/")
        self.page.get_by_label("Username").fill(username)
        self.page.get_by_label("Password").fill(password)
        self.page.get_by_role("button", name="Log in").click()
        self.page.wait_for_url("**/account/")


@pytest.fixture
def tab(browser: Any, server: Server) -> Iterator[Tab]:
    opened = Tab(browser, server, DESKTOP)
    yield opened
    opened.context.close()
    assert not opened.problems, f"{opened.problems}; see {ARTIFACTS / 'web-server.log'}"


def _pages(world: World) -> dict[str, str]:
    return {
        "home": "/",
        "ladder": f"/ladders/{world.ladder}/",
        "bot": f"/bots/{world.bot}/",
        "match": f"/matches/{world.replay_match}/",
        "match-faults": f"/matches/{world.fault_match}/",
        "match-person": f"/matches/{world.person_match}/",
        "tournament": f"/tournaments/{world.tournament}/",
        "signup": "/signup/",
        "login": "/login/",
        "password-reset": "/password-reset/",
        "tournaments": "/tournaments/",
        "bots": "/bots/",
        "matches": "/matches/",
        "builtin": "/bots/builtin/heuristic/",
        "guides": "/docs/",
        "guide": "/docs/bots/",
        "play": "/play/",
    }


OWNER_PAGES = {"account": "/account/", "bot-new": "/bots/new/", "challenge": "/challenges/new/"}
PAGE_NAMES = [
    "home",
    "ladder",
    "bot",
    "match",
    "match-faults",
    "match-person",
    "tournament",
    "signup",
    "login",
    "password-reset",
    "tournaments",
    "bots",
    "matches",
    "builtin",
    "guides",
    "guide",
    "play",
]


@pytest.mark.parametrize("name", PAGE_NAMES)
@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_page_loads_with_real_data_fits_and_is_screenshotted(
    browser: Any, server: Server, world: World, name: str, viewport: str
) -> None:
    tab = Tab(browser, server, DESKTOP if viewport == "desktop" else PHONE)
    try:
        response = tab.open(_pages(world)[name])
        timing = response.headers.get("server-timing", "")
        assert re.fullmatch(r"app;dur=[0-9.]+", timing), timing
        page = tab.page
        heading = page.locator("h1").inner_text()
        expected = {
            "home": "Bidel: the Hearts bot arena",
            "ladder": "Ladder standard",
            "bot": world.bot_name,
            "match": f"Match {world.replay_match}",
            "match-faults": f"Match {world.fault_match}",
            "match-person": f"Match {world.person_match}",
            "tournament": "Autumn cup",
            "signup": "Sign up",
            "login": "Log in",
            "password-reset": "Choose a new password",
            "tournaments": "Tournaments",
            "bots": "Bots",
            "matches": "Matches",
            "builtin": "heuristic (built-in bot)",
            "guides": "Guides",
            "guide": "Writing a Bidel bot",
            "play": "Play against bots",
        }
        assert heading == expected[name]
        if name == "ladder":
            assert page.locator("table.rankings tbody tr").count() == world.entries
            if viewport == "phone":  # every value of a row on the screen, none cut off
                for cell in page.locator("table.rankings tbody tr").first.locator("td").all():
                    box = cell.bounding_box()
                    assert box and box["x"] + box["width"] <= PHONE["width"], cell.inner_text()
            assert page.locator(".interval[role=img]").count() == world.rated
            assert page.get_by_role("link", name=world.bot_name).count() == 1
        if name == "bot":
            chart = page.locator("svg.chart")
            assert chart.get_attribute("role") == "img"
            assert chart.locator("circle").count() == world.history >= 2
            assert "Validation log" not in page.content()  # not signed in: not the owner
        if name == "tournament":
            assert "4 of 4 matches" in page.inner_text("main")
            assert f"Field: random, low, heuristic, {world.bot_name} v1" in page.inner_text("main")
            assert page.locator("main a[href^='/matches/']").count() == 4
            assert page.get_by_role("table", name=re.compile("Crosstable")).count() == 1
        if name == "match":
            assert page.locator("#table .seat").count() == 4
        if name == "match-person":  # the person's seat named in the replay, as in the table
            assert page.locator("#table .seat").count() == 4
            assert "a person" in page.locator("#table").inner_text()
        if name in ("home", "matches", "match-person"):  # a person's game among the bots'
            assert "a person" in page.inner_text("main")
        if name == "tournaments":
            assert page.get_by_role("link", name="Autumn cup").count() == 1
        if name == "matches":  # every seat with its score
            assert page.locator("main tbody tr").count() >= 3
            assert re.search(r"\w \d+, ", page.inner_text("main tbody"))
        if name == "home":
            assert page.get_by_role("link", name="The guide").get_attribute("href") == "/docs/bots/"
        if viewport == "phone":  # nothing wider than the screen: no sideways scrolling
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], f"{name} is {width}px wide on a phone"
        tab.shoot(f"{name}-{viewport}")
        assert not tab.problems, tab.problems
    finally:
        tab.context.close()


def _axe_violations(page: Any) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, options={"runOnly": {"type": "tag", "values": AXE_TAGS}})
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at "
        + ", ".join(str(node["target"]) for node in v["nodes"][:5])
        for v in results.response["violations"]
    ]


@pytest.mark.parametrize("name", PAGE_NAMES)
def test_page_passes_axe_accessibility_checks(tab: Tab, world: World, name: str) -> None:
    tab.open(_pages(world)[name])
    assert _axe_violations(tab.page) == []


def test_owner_pages_and_form_errors_pass_axe_accessibility_checks(tab: Tab, world: World) -> None:
    tab.log_in(world.owner)
    for name, path in {
        **OWNER_PAGES,
        "upload": f"/bots/{world.bot}/upload/",
        "bot-owner": f"/bots/{world.bot}/",
    }.items():
        tab.open(path)
        assert _axe_violations(tab.page) == [], name
        tab.shoot(name)
    tab.open("/challenges/new/")
    tab.page.get_by_label("Seat 1").fill("nobody-by-this-name")
    tab.page.get_by_role("button", name="Queue the challenge").click()
    assert tab.page.get_by_role("alert").count() == 1
    assert _axe_violations(tab.page) == [], "challenge form with errors"
    tab.shoot("challenge-errors")


# --- the replay viewer -----------------------------------------------------------------------

SNAPSHOT = """() => ({
  status: document.getElementById("status").textContent,
  share: document.getElementById("share").getAttribute("href"),
  seats: [...document.querySelectorAll("#table .seat")].map((box) => ({
    cards: [...box.querySelectorAll(".cards .card")].map((c) => c.dataset.card),
    passed: [...box.querySelectorAll(".cards .card.passed")].map((c) => c.dataset.card),
    points: box.querySelector(".points").textContent,
    winner: box.classList.contains("winner"),
  })),
  trick: [...document.querySelectorAll("#table .trick .played")].map(
    (p) => [Number(p.dataset.seat), p.querySelector(".card").dataset.card]),
})"""

VALUES = {"QS": 13, **{f"{rank}H": 1 for rank in "23456789TJQKA"}}  # standard rules
SEATS = range(4)
NONE: list[list[str]] = [[], [], [], []]


def _expected_steps(record: dict[str, Any], names: list[str]) -> list[dict[str, Any]]:
    """What the viewer must show at each step, from the record replayed by the engine."""
    state = replay(record)
    steps: list[dict[str, Any]] = []
    totals = [0, 0, 0, 0]
    for number, hand in enumerate(state.history):
        data = record["hands"][number]
        held = [sorted(c for t in hand.tricks for s, c in t.plays if s == seat) for seat in SEATS]
        totals = [t + s for t, s in zip(totals, hand.scores, strict=True)]
        end = f"Scores {', '.join(map(str, hand.scores))}; totals {', '.join(map(str, totals))}"
        if data.get("passes"):
            steps.append(
                {
                    "hand": number,
                    "status": f"Hand {number + 1}, passing",
                    "cards": [sorted(d) for d in data["deal"]],
                    "passed": data["passes"],
                    "trick": [],
                    "points": [0] * 4,
                    "winner": None,
                }
            )
        steps.append(
            {
                "hand": number,
                "status": f"Hand {number + 1}, ",
                "cards": held,
                "passed": NONE,
                "trick": [],
                "points": [0] * 4,
                "winner": None,
            }
        )
        remaining = [list(cards) for cards in held]
        points = [0, 0, 0, 0]
        for index, trick in enumerate(hand.tricks):
            for k, (seat, card) in enumerate(trick.plays):
                remaining[seat].remove(card)
                complete = k == len(trick.plays) - 1
                if complete:
                    points[trick.winner] += sum(VALUES.get(c, 0) for _, c in trick.plays)  # type: ignore[index]
                status = f"Hand {number + 1}, trick {index + 1}, card {k + 1} of 4"
                if complete:
                    status += f" — {names[trick.winner]} takes it"  # type: ignore[index]
                steps.append(
                    {
                        "hand": number,
                        "status": status,
                        "cards": [sorted(r) for r in remaining],
                        "passed": NONE,
                        "trick": [list(p) for p in trick.plays[: k + 1]],
                        "points": points[:],
                        "winner": trick.winner if complete else None,
                    }
                )
        assert points == list(hand.points)
        steps[-1]["end"] = end
    return steps


def test_replay_steps_through_the_match_as_the_record_says(tab: Tab, world: World) -> None:
    record, names = world.records[world.replay_match], world.names[world.replay_match]
    expected = _expected_steps(record, names)
    tab.open(f"/matches/{world.replay_match}/")
    page = tab.page
    page.evaluate("document.activeElement.blur()")  # keys go to the page, not a control
    for index, want in enumerate(expected):
        if index:
            page.keyboard.press("ArrowRight")
        shown = page.evaluate(SNAPSHOT)
        where = f"step {index}: {shown['status']}"
        assert shown["status"].startswith(want["status"]), where
        assert [sorted(seat["cards"]) for seat in shown["seats"]] == want["cards"], where
        assert [sorted(seat["passed"]) for seat in shown["seats"]] == [
            sorted(p) for p in want["passed"]
        ], where
        assert shown["trick"] == want["trick"], where
        assert [int(seat["points"].split()[0]) for seat in shown["seats"]] == want["points"], where
        assert [i for i, seat in enumerate(shown["seats"]) if seat["winner"]] == (
            [] if want["winner"] is None else [want["winner"]]
        ), where
        if "end" in want:
            assert want["end"] in shown["status"], where
        if index in (0, 20, len(expected) - 1):
            tab.shoot(f"replay-step-{index}")
    final = page.evaluate(SNAPSHOT)
    page.keyboard.press("ArrowRight")  # past the last card: nothing more to show
    assert page.evaluate(SNAPSHOT) == final
    for _ in range(3):
        page.keyboard.press("ArrowLeft")
    assert page.evaluate(SNAPSHOT)["status"].startswith(expected[-4]["status"])


def test_an_analysed_seat_shows_a_bar_per_decision_that_takes_the_replay_there(
    tab: Tab, world: World
) -> None:
    tab.open(f"/matches/{world.replay_match}/")
    page = tab.page
    document = page.evaluate("window.bidelAnalysis.shown")
    assert document["status"] == "done" and document["seat"] == 0
    items = page.locator("#analysis-decisions li")
    assert items.count() == len(document["decisions"]) > 0
    api = page.evaluate(
        f"fetch('/api/matches/{world.replay_match}/analysis/0/').then((r) => r.json())"
    )
    assert api == document  # the page shows the API's numbers
    marks = {d["mark"] for d in document["decisions"]}
    for mark in marks - {""}:  # each mark is named on its bar, in words
        assert page.locator(f"#analysis-decisions button.{mark}").first.inner_text().count(mark)
    plays = [k for k, d in enumerate(document["decisions"]) if d["decision"] == "play"]
    for k in (plays[0], plays[-1]):
        decision = document["decisions"][k]
        items.nth(k).locator("button").click()
        shown = page.evaluate(SNAPSHOT)
        trick = f"trick {decision['trick'] + 1}, card"
        assert trick in shown["status"] and f"Hand {decision['hand'] + 1}" in shown["status"]
        assert [0, decision["played"]] in shown["trick"], shown  # the card, on the table
        assert items.nth(k).get_attribute("aria-current") == "step"
    passes = [k for k, d in enumerate(document["decisions"]) if d["decision"] == "pass"]
    if passes:
        items.nth(passes[0]).locator("button").click()
        assert "passing" in page.evaluate(SNAPSHOT)["status"]
    tab.shoot("analysis")
    # The other seats: none asked for; a visitor is told to sign in to ask.
    page.locator("#analysis-seat").select_option("1")
    assert "sign in" in page.locator("#analysis-status").inner_text()
    assert items.count() == 0


def test_a_signed_in_person_asks_for_a_seats_analysis_and_the_runners_make_it(
    tab: Tab, world: World
) -> None:
    tab.log_in(world.owner)
    tab.open(f"/matches/{world.replay_match}/")
    page = tab.page
    page.locator("#analysis-seat").select_option("2")
    ask = page.get_by_role("button", name="Analyse this seat")
    assert "has not been analysed yet." in page.locator("#analysis-status").inner_text()
    with celery_worker(env=world.env, hostname="analyst@browser", queues=["celery", "runner"]):
        ask.click()  # (the page's session and CSRF token: the API's POST, as a person sends it)
        page.wait_for_function(
            "() => window.bidelAnalysis.shown && window.bidelAnalysis.shown.status === 'done'",
            timeout=LONG_MS,
        )
    document = page.evaluate("window.bidelAnalysis.shown")
    assert document["seat"] == 2 and document["decisions"]
    assert page.locator("#analysis-decisions li").count() == len(document["decisions"])
    assert not ask.is_visible()  # made: nothing more to ask
    assert (
        f"{len(document['decisions'])} decisions analysed"
        in page.locator("#analysis-status").inner_text()
    )
    assert _axe_violations(page) == []


def test_replay_controls_work_by_keyboard_and_links_open_a_given_trick(
    tab: Tab, world: World
) -> None:
    record, names = world.records[world.replay_match], world.names[world.replay_match]
    expected = _expected_steps(record, names)
    page = tab.page
    tab.open(f"/matches/{world.replay_match}/")
    # Tab reaches the controls in order and Enter works them.
    page.get_by_role("button", name="Step forward").focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    assert page.evaluate(SNAPSHOT)["status"].startswith(expected[2]["status"])
    page.keyboard.press("Shift+Tab")  # to Play
    assert page.evaluate("document.activeElement.id") == "play-replay"
    page.keyboard.press("Enter")
    expect_pause = page.get_by_role("button", name="Pause")
    expect_pause.wait_for()
    page.keyboard.press("Enter")  # pause again
    page.get_by_role("button", name="Play").wait_for()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.id") == "first"
    page.keyboard.press("Enter")
    assert page.evaluate(SNAPSHOT)["status"].startswith(expected[0]["status"])
    # A shared link opens the same step, on a fresh page.
    for _ in range(9):
        page.get_by_role("button", name="Step forward").click()
    shown = page.evaluate(SNAPSHOT)
    link = shown["share"]
    assert link == "#h1s9"
    other = tab.context.new_page()
    other.goto(f"/matches/{world.replay_match}/{link}")
    assert other.evaluate(SNAPSHOT) == shown
    # The hand menu jumps to a hand.
    other.get_by_label("Hand").select_option(index=2)  # the menu lists hands 1, 2, 3
    assert other.evaluate(SNAPSHOT)["status"].startswith("Hand 3, passing")
    tab.shoot("replay-hand-3")
    other.close()


def test_replay_marks_a_moon_shot(tab: Tab, world: World) -> None:
    record, names = world.records[world.moon_match], world.names[world.moon_match]
    assert replay(record).history[0].shooter == 0, "the seed no longer gives a moon shot"
    tab.open(f"/matches/{world.moon_match}/#h1s53")  # after the last card
    status = tab.page.locator("#status")
    assert status.inner_text().endswith(
        f"Scores 0, 26, 26, 26; totals 0, 26, 26, 26 — {names[0]} shot the moon!"
    )
    assert "moon" in (status.get_attribute("class") or "")
    tab.page.keyboard.press("ArrowLeft")
    assert "moon" not in tab.page.locator("#status").inner_text()
    tab.shoot("replay-moon")


def test_replay_marks_faults_counting_hands_and_seats_from_1(tab: Tab, world: World) -> None:
    tab.open(f"/matches/{world.fault_match}/")
    first = tab.page.locator('#table .seat[data-seat="0"]')  # the record's seat 0: a person's 1
    fault = first.locator(".fault")
    assert re.search(r"1 fault\(s\): illegal in hand 1\b", fault.inner_text())
    assert tab.page.locator("#table .fault").count() == 1
    titles = tab.page.locator("#table .seat h3").all_inner_texts()
    assert [re.findall(r"· seat (\d+) ·", t) for t in titles] == [["1"], ["2"], ["3"], ["4"]]


# --- signed in -------------------------------------------------------------------------------


def test_owner_sees_validation_and_stderr_logs_others_do_not(
    tab: Tab, browser: Any, server: Server, world: World
) -> None:
    tab.log_in(world.owner)
    tab.open(f"/bots/{world.bot}/")
    page = tab.page
    page.get_by_text("Validation log of version 2").click()
    assert "illegal" in page.locator("details[open] pre").first.inner_text()
    stderr = page.locator("details", has_text=f"Match {world.replay_match}, seat 1")
    stderr.locator("summary").click()
    assert "ducking" in stderr.locator("pre").inner_text()
    tab.shoot("bot-owner-logs")
    tab.open(f"/matches/{world.fault_match}/")
    assert "about to cheat" in (page.locator("details", has_text="Seat 1:").text_content() or "")
    anonymous = Tab(browser, server, DESKTOP)
    anonymous.open(f"/matches/{world.fault_match}/")
    assert "about to cheat" not in anonymous.page.content()
    anonymous.context.close()


def test_forms_show_errors_beside_the_fields_in_the_apis_words(tab: Tab, world: World) -> None:
    page = tab.page
    tab.open("/signup/")
    page.get_by_label("Username").fill("ada")  # taken
    page.get_by_label("Password").fill("short")
    page.get_by_role("button", name="Sign up").click()
    assert page.locator("#id_password").get_attribute("aria-invalid") == "true"
    assert (
        "Ensure this field has at least 10 characters."
        in page.locator("#err_password").inner_text()
    )
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign up").click()
    assert "that username is taken" in page.locator("#err_username").inner_text()
    tab.open("/login/")
    page.get_by_label("Username").fill(world.owner)
    page.get_by_label("Password").fill("wrong password!")
    page.get_by_role("button", name="Log in").click()
    assert "Unable to log in with provided credentials." in page.get_by_role("alert").inner_text()


def test_author_signs_up_uploads_and_challenges_through_the_forms(tab: Tab, world: World) -> None:
    name = f"author{uuid.uuid4().hex[:6]}"
    page = tab.page
    with celery_worker(env=world.env, hostname=f"{name}@browser", queues=["celery", "runner"]):
        tab.open("/signup/")
        page.get_by_label("Username").fill(name)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign up").click()
        page.wait_for_url("**/account/")
        assert f"Welcome, {name}" in page.get_by_role("status").inner_text()
        page.get_by_role("link", name="New bot").click()
        page.get_by_label("Bot name").fill(f"{name}-bot")
        page.get_by_label("Description").fill("Written in a browser test.")
        page.get_by_role("button", name="Create the bot").click()
        page.get_by_label("Bot code").set_input_files(
            {"name": "bot.py", "mimeType": "text/x-python", "buffer": GOOD_BOT}
        )
        page.get_by_role("button", name="Upload").click()
        assert "Version 1 uploaded" in page.get_by_role("status").inner_text()
        # The worker validates it; the page refreshes itself until it is done.
        version = page.locator("table", has_text="Versions of").locator("tbody tr").first
        version.get_by_text("active").wait_for(timeout=LONG_MS)
        tab.shoot("author-bot-validated")
        page.get_by_role("link", name="Challenge").click()
        page.get_by_label("Seat 1").fill(f"{name}-bot")
        page.get_by_label("Seat 2").fill("random")
        page.get_by_label("Seat 3").fill("low")
        page.get_by_label("Seat 4").fill("heuristic")
        page.get_by_label("Hands").fill("1")
        page.get_by_role("button", name="Queue the challenge").click()
        page.wait_for_url(re.compile(r"/matches/\d+/$"))
        # Played by the worker while the page watches it live; then its replay.
        page.get_by_role("link", name="See its replay").click(timeout=LONG_MS)
        page.locator("#share").wait_for()  # the finished match's page,
        page.locator("#table .seat").first.wait_for()  # drawn by its script
        assert page.locator("#table .seat").count() == 4
        page.evaluate("document.activeElement.blur()")
        page.keyboard.press("ArrowRight")
        assert page.evaluate(SNAPSHOT)["status"].startswith("Hand 1, after passing")
        tab.shoot("author-challenge-replay")


def test_the_api_token_is_copied_with_one_click(tab: Tab, world: World) -> None:
    tab.log_in(world.owner)
    page = tab.page
    page.get_by_role("button", name="Make a token").click()  # its key shows on that answer only
    tab.context.grant_permissions(["clipboard-read", "clipboard-write"])
    token = page.locator("#token").input_value()
    assert len(token) == 43
    page.get_by_role("button", name="Copy").click()
    page.locator("#copy-status").filter(has_text="Copied.").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == token
    box = page.locator("#token").bounding_box()
    assert box and box["width"] >= 300  # the whole token shows, in a field made for it


# --- the same pages in Persian, right to left ------------------------------------------------


#: The commands and names in running text (``code`` outside ``pre``) that take more than one
#: line: each line box of an element is one of its client rects.
COMMANDS_BROKEN = """() => [...document.querySelectorAll("code")]
  .filter((c) => !c.closest("pre") && c.textContent.length < 60)
  .filter((c) => {
    const range = document.createRange();
    range.selectNodeContents(c);
    const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
    return tops.size > 1;
  })
  .map((c) => c.textContent)"""


@pytest.mark.parametrize("name", PAGE_NAMES)
@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_page_in_persian_is_right_to_left_fits_and_passes_axe(
    browser: Any, server: Server, world: World, name: str, viewport: str
) -> None:
    tab = Tab(browser, server, DESKTOP if viewport == "desktop" else PHONE, locale="fa-IR")
    try:
        tab.open(_pages(world)[name])
        page = tab.page
        assert page.evaluate("[document.documentElement.lang, document.documentElement.dir]") == [
            "fa",
            "rtl",
        ]
        assert page.get_by_role("navigation", name="اصلی").count() == 1
        if viewport == "phone":
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], f"{name} is {width}px wide on a phone"
        else:
            assert _axe_violations(page) == []
            # A command in a sentence is never broken across lines (it fits on one here).
            broken = page.evaluate(COMMANDS_BROKEN)
            assert broken == [], f"{name}: commands broken across lines: {broken}"
        tab.shoot(f"fa-{name}-{viewport}")
        assert not tab.problems, tab.problems
    finally:
        tab.context.close()


def test_replay_in_persian_steps_by_keyboard_the_way_the_page_reads(
    browser: Any, server: Server, world: World
) -> None:
    tab = Tab(browser, server, DESKTOP, locale="fa-IR")
    try:
        tab.open(f"/matches/{world.replay_match}/")
        page = tab.page
        status = page.locator("#status")
        first = status.inner_text()
        assert first.startswith("دست ۱، ")  # "Hand 1, " in Persian, Persian digits
        page.keyboard.press("ArrowLeft")  # forward, right to left
        page.keyboard.press("ArrowLeft")
        forward = status.inner_text()
        assert forward != first and "دور ۱، کارت" in forward, forward
        page.keyboard.press("ArrowRight")  # and back one card
        assert status.inner_text() != forward
        page.keyboard.press("ArrowRight")
        assert status.inner_text() == first
        seats = page.locator("#table .seat h3").all_inner_texts()
        assert seats and all("جایگاه" in text for text in seats), seats
        assert "جایگاه ۱ ·" in seats[0] and "جایگاه ۴ ·" in seats[3], seats  # from 1, Persian
        assert _axe_violations(page) == []
        tab.shoot("fa-replay")
        assert not tab.problems, tab.problems
    finally:
        tab.context.close()


def test_owner_pages_in_persian_pass_axe(browser: Any, server: Server, world: World) -> None:
    tab = Tab(browser, server, DESKTOP, locale="fa-IR")
    try:
        tab.open("/login/")
        page = tab.page
        page.locator("#id_username").fill(world.owner)
        page.locator("#id_password").fill(PASSWORD)
        page.get_by_role("button", name="ورود").click()
        page.wait_for_url("**/account/")
        for path in [*OWNER_PAGES.values(), f"/bots/{world.bot}/upload/", f"/bots/{world.bot}/"]:
            tab.open(path)
            assert page.evaluate("document.documentElement.dir") == "rtl", path
            assert _axe_violations(page) == [], path
        assert not tab.problems, tab.problems
    finally:
        tab.context.close()


def _in_world(world: World, code: str) -> str:
    """Run ``code`` (after ``django.setup()``) in a child process on the world's database (this
    one holds no connection); the last line it printed."""
    made = subprocess.run(
        [sys.executable, "-c", "import django\ndjango.setup()\n" + code],
        cwd=PROJECT_DIR,
        env={**world.env, "DJANGO_SETTINGS_MODULE": "hearts_platform.settings"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    return made.stdout.strip().splitlines()[-1]


def _queue_match_without_playing_it(world: World, seats: list[str], hands: int) -> int:
    """A challenge queued in the world's database (a child process: this one holds no
    connection); no worker runs yet, so nothing of it is played before the page watches."""
    code = (
        "from arena import services\n"
        "from arena.models import Match\n"
        f"seats = [services.SeatSpec(builtin=b) for b in {seats!r}]\n"
        "match = services.match_create(kind=Match.Kind.CHALLENGE, seats=seats, "
        f"hands={hands}, seed=77)\n"
        "print(match.pk)\n"
    )
    return int(_in_world(world, code))


LIVE_STATE = """() => ({
  status: document.getElementById("status").textContent,
  following: document.getElementById("live").getAttribute("aria-pressed") === "true",
  ended: window.bidelLive.ended,
  events: window.bidelLive.events,
  hands: window.bidelLive.data.hands,
})"""


def test_a_second_browser_follows_a_bot_match_and_its_replay_is_the_live_sequence(
    tab: Tab, world: World
) -> None:
    """A page opened before a bot match is played follows it to its end: every event once, in
    order, and the stored replay is what it showed. That the moves reach a spectator while the
    match is being played is shown where the test holds the match still (a person's game, in
    the test below: nothing moves until the person answers); how fast they reach 1, 10 and 100
    spectators is measured by bench/live_bench.py."""
    match_id = _queue_match_without_playing_it(
        world, ["montecarlo", "heuristic", "montecarlo", "low"], hands=2
    )
    page = tab.page
    tab.open(f"/matches/{match_id}/")
    page.wait_for_function("() => window.bidelLive && window.bidelLive.connected")
    assert page.evaluate("() => window.bidelLive.events.length") == 0
    assert "Waiting for the first deal" in page.locator("#status").inner_text()
    watching = page.evaluate("() => Date.now() / 1000")
    # Connected (the consumer said hello before any event): now the match is played.
    with celery_worker(
        env=world.env, hostname=f"live-{match_id}@browser", queues=["celery", "runner"]
    ):
        page.wait_for_function(
            "() => window.bidelLive.events.some((e) => e.type === 'frame')", timeout=LONG_MS
        )
        assert _axe_violations(page) == []
        page.set_viewport_size(PHONE)  # the live page on a phone: nothing wider than the screen
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"the live match page is {width}px wide on a phone"
        page.set_viewport_size(DESKTOP)
        page.wait_for_function("() => window.bidelLive.stored", timeout=LONG_MS)
    live = page.evaluate(LIVE_STATE)
    assert not live["following"] and " · live" not in live["status"]  # over: nothing to follow
    frames = [e for e in live["events"] if e["type"] == "frame"]
    assert {e["seq"] for e in frames} and all(e["at"] >= watching - 1 for e in frames)
    events = [e for e in live["events"] if "seq" in e]
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(set(seqs)) and seqs[0] == 0  # in order, none repeated
    assert page.locator("#live-status").is_visible()
    # The finished replay is the live sequence.
    tab.open(f"/matches/{match_id}/")
    finished = page.evaluate("() => JSON.parse(document.getElementById('replay').dataset.frames)")
    assert len(finished["hands"]) == len(live["hands"]) == 2
    for seen, stored in zip(live["hands"], finished["hands"], strict=True):
        for field in ("dealt", "passes", "tricks", "points", "scores", "totals", "shooter"):
            assert seen[field] == stored[field], field
    tab.shoot("live-match-finished")


def _persons_game_as_hakem(world: World, rules: str) -> tuple[int, str]:
    """A person's game (seat 0) dealt so that seat 0 is the hakem: its match and its seat's
    secret (what the seat cookie holds)."""
    from engine.rules import RuleSet
    from engine.state import GameState

    seed = next(s for s in range(1000) if GameState(RuleSet.from_spec(rules), seed=s).current == 0)
    code = (
        "from arena import services\n"
        "opponents = [services.SeatSpec(builtin=b) for b in ('heuristic', 'montecarlo', 'low')]\n"
        "match, token = services.human_game_create(user=None, opponents=opponents, "
        f"rules={rules!r}, hands=1, seed={seed})\n"
        "print(match.pk, token)\n"
    )
    number, token = _in_world(world, code).split()
    return int(number), token


PLAY_STATE = """() => ({
  connected: window.bidelPlay.connected,
  pending: window.bidelPlay.pending && window.bidelPlay.sentFor !== window.bidelPlay.pending.id
    ? window.bidelPlay.pending : null,
  closed: window.bidelPlay.closed,
  hand: [...document.querySelectorAll("#hand button.card")].map((b) => b.dataset.card),
  enabled: [...document.querySelectorAll("#hand button.card:not([disabled])")].map(
    (b) => b.dataset.card),
})"""
WAIT_FOR_A_QUESTION = """() => window.bidelPlay.closed || (window.bidelPlay.pending
  && window.bidelPlay.sentFor !== window.bidelPlay.pending.id)"""


LAST_TRICK_IS = """(plays) => {
  const hands = window.bidelLive.data.hands, frame = hands[hands.length - 1];
  const trick = frame && frame.tricks[frame.tricks.length - 1];
  return Boolean(trick) && JSON.stringify(trick.plays) === JSON.stringify(plays);
}"""


def _watch_the_game_held_on_the_person(bystander: Tab, trick: list[list[Any]]) -> None:
    """While the game waits on its person, nothing moves but what the feed brought: the
    bystander's page shows the trick as it stands (the bots' cards played before the person's
    turn reached it while the match is being played), says it is live, and "Step back" and
    "Live" work on it."""
    page = bystander.page
    page.wait_for_function(LAST_TRICK_IS, arg=trick, timeout=LONG_MS)
    assert " · live" in page.locator("#status").inner_text()
    assert page.evaluate(LIVE_STATE)["following"] and not page.evaluate(LIVE_STATE)["ended"]
    page.get_by_role("button", name="Step back").click()
    assert not page.evaluate(LIVE_STATE)["following"]
    page.get_by_role("button", name="Live").click()
    assert page.evaluate(LIVE_STATE)["following"]
    assert page.evaluate(LAST_TRICK_IS, trick)


def _answer(page: Any, ask: dict[str, Any], by_keyboard: bool) -> None:
    """Answer the open question as a person would: the first legal choice (lowest card)."""

    def press(locator: Any) -> None:
        if by_keyboard:
            locator.focus()
            page.keyboard.press("Enter")
        else:
            locator.click()

    legal = ask["view"]["legal"]
    if ask["decision"] == "pass":
        for card in ask["view"]["hand"][: ask["count"]]:
            press(page.locator(f'#hand button[data-card="{card}"]'))
        press(page.locator("#confirm"))
    elif ask["decision"] == "play":
        press(page.locator(f'#hand button[data-card="{legal[0]}"]'))
    else:
        press(page.locator(f'#choices button[data-option="{legal[0]}"]'))


@pytest.mark.parametrize("rules", ["standard", "hokm_40"])
def test_a_person_plays_a_whole_hand_by_keyboard_and_mouse_and_a_reload_resumes(
    tab: Tab, browser: Any, server: Server, world: World, rules: str
) -> None:
    page = tab.page
    with celery_worker(
        env=world.env,
        hostname=f"person-{rules}@browser",
        queues=["celery", "runner", PEOPLE_QUEUE],
        concurrency=2,
    ):
        if rules == "standard":  # through the form, as anyone would
            tab.open("/play/")
            page.get_by_label("Rules").select_option(rules)
            page.get_by_label("Hands").fill("1")
            page.get_by_role("button", name="Sit down").click()
            page.wait_for_url(re.compile(r"/play/\d+/$"))
            cookies = {c["name"]: c for c in tab.context.cookies()}
            seat = cookies["bidel_seat"]  # the secret: in a cookie no script reads, not the URL
            assert seat["httpOnly"] and seat["sameSite"] == "Strict"
            assert seat["value"] not in page.url
        else:  # dealt so that the person is the hakem: they declare trumps too
            number, token = _persons_game_as_hakem(world, rules)
            tab.context.add_cookies(
                [{"name": "bidel_seat", "value": token, "url": server.url, "httpOnly": True}]
            )
            tab.open(f"/play/{number}/")
        page.wait_for_function(WAIT_FOR_A_QUESTION, timeout=LONG_MS)
        if rules == "standard":  # the rest of this game on a phone's screen
            page.set_viewport_size(PHONE)
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], f"the game is {width}px wide on a phone"
        assert _axe_violations(page) == []
        tab.shoot(f"play-{rules}-start")
        # A bystander watches the same game on its match page: what reaches that browser.
        match_path = page.locator("#play").get_attribute("data-match")
        bystander = Tab(browser, server, DESKTOP)
        frames: list[str] = []
        bystander.page.on(
            "websocket", lambda ws: ws.on("framereceived", lambda data: frames.append(str(data)))
        )
        bystander.open(match_path)
        decisions, reloaded, watched, asked = 0, False, False, []
        while True:
            page.wait_for_function(WAIT_FOR_A_QUESTION, timeout=LONG_MS)
            seen = page.evaluate(PLAY_STATE)
            if seen["closed"]:
                break
            ask = seen["pending"]
            if ask["decision"] == "play":
                # Only the legal cards can be chosen; the others are disabled buttons.
                assert sorted(seen["enabled"]) == sorted(ask["view"]["legal"])
                assert set(seen["hand"]) == set(ask["view"]["hand"])
                if not watched and ask["view"]["trick"]:
                    _watch_the_game_held_on_the_person(bystander, ask["view"]["trick"])
                    watched = True
                if not reloaded and ask["view"]["trick"]:  # mid-trick: reload, same position
                    page.reload()
                    page.wait_for_function(WAIT_FOR_A_QUESTION, timeout=DEADLINE_MS)
                    again = page.evaluate(PLAY_STATE)
                    assert again["pending"]["id"] == ask["id"]
                    assert again["pending"]["view"] == ask["view"]
                    assert again["hand"] == seen["hand"] and again["enabled"] == seen["enabled"]
                    reloaded = True
                    tab.shoot(f"play-{rules}-after-reload")
            _answer(page, ask, by_keyboard=decisions % 2 == 1)
            asked.append(ask["decision"])
            decisions += 1
        assert (
            reloaded and watched and decisions >= 10
        )  # a whole hand: passing (or trumps) and every trick
        if rules == "hokm_40":
            assert asked[0] == "trump"  # the hakem declared trumps, by mouse
        said = page.locator("#prompt").inner_text()
        mine = int(page.locator("#play").get_attribute("data-seat"))  # type: ignore[arg-type]
        page.get_by_role("link", name="See its replay").wait_for(timeout=LONG_MS)
        bystander.page.wait_for_function("() => window.bidelLive.stored", timeout=LONG_MS)
        assert _axe_violations(bystander.page) == []
        bystander.context.close()
        match_id = int(
            re.search(
                r"/matches/(\d+)/", page.locator("#live-status a").get_attribute("href")
            ).group(1)
        )  # type: ignore[union-attr]
        tab.shoot(f"play-{rules}-over")
    record = page.request.get(f"/api/matches/{match_id}/record/").json()
    checked = verify(record)
    assert checked.get("valid"), checked
    assert len(record["hands"]) == 1
    # The end says who won (the lowest total) and, if not the person, what they have.
    seats = page.request.get(f"/api/matches/{match_id}/").json()["seats"]
    totals = [s["score"] for s in sorted(seats, key=lambda s: s["seat"])]
    best = min(totals)
    if totals[mine] == best:
        assert said.startswith("The game is over: you "), said
        assert f"with {best} points" in said, said
    else:
        assert said.endswith(f" won, with {best} points; you have {totals[mine]}."), said
    # On the wire, the bystander never received a card before it was played.
    plays = record["hands"][0]["plays"]
    events = [json.loads(f) for f in frames]
    shown_frames = [e for e in events if e.get("type") == "frame"]
    assert len(shown_frames) >= decisions
    for event in shown_frames:
        shown = [c for trick in event["frame"]["tricks"] for _, c in trick["plays"]]
        assert shown == plays[: len(shown)]
        cards = set(re.findall(r'"([2-9TJQKA][CDHS])"', json.dumps(event)))
        assert cards <= set(shown), f"unplayed cards on the wire: {cards - set(shown)}"
    assert tab.problems == []
