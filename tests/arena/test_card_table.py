"""The card table in a real headless Chromium against the real web server: the replay and a
person's game drawn as a table seen from above (arena/static/arena/replay.js, play.js). The
seats sit round the felt in play order, a pass goes to the seat its words name and that seat
is on that side (right to left too), the person's hand is at the bottom whatever their seat, a
completed trick ends attributed to its winner and then leaves the table (with motion or,
asked, without), tables of three to eight seats fit, and a coach's hint is offered only when
the question carries one. Every wait is a condition with a deadline, never a pause."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest

from hearts_runner.config import PEOPLE_QUEUE
from tests.arena import test_browser
from tests.arena.browser import Server, World
from tests.arena.test_browser import (
    DESKTOP,
    LONG_MS,
    PHONE,
    PLAY_STATE,
    WAIT_FOR_A_QUESTION,
    Tab,
    _answer,
    _axe_violations,
    _in_world,
)
from tests.support import celery_worker

pytestmark = [pytest.mark.timeout(900), pytest.mark.browser]

# The browser tests' fixtures, for this module too: its own world, server and browser.
world = test_browser.world
server = test_browser.server
browser = test_browser.browser
tab = test_browser.tab

#: The table's boxes on the screen: the trick area, each seat's (in seat order).
BOXES = """() => {
  const box = (el) => { const r = el.getBoundingClientRect();
    return { x: r.x, y: r.y, width: r.width, height: r.height }; };
  return {
    trick: box(document.querySelector("#table .trick")),
    seats: [...document.querySelectorAll("#table .seat")].map(box),
    played: [...document.querySelectorAll("#table .trick .played")].map(
      (p) => ({ seat: Number(p.dataset.seat), box: box(p.querySelector(".card")) })),
  };
}"""
#: Nothing moves on the page (CSS transitions and animations are all over).
STILL = "() => document.getAnimations().length === 0"
#: Where a pass in each direction goes, seen from the seat at the bottom.
SIDE_OF = {"left": "left", "right": "right", "across": "top"}
#: The words of the direction in the status, by language.
WORDS = {
    "en": {"left": "passing left", "right": "passing right", "across": "passing across"},
    "fa": {"left": "رد کردن به چپ", "right": "رد کردن به راست", "across": "رد کردن به روبه‌رو"},
}


def _centre(box: dict[str, float]) -> tuple[float, float]:
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def _side(box: dict[str, float], trick: dict[str, float]) -> str:
    """Which side of the trick area a seat's box is on (wholly beyond that edge)."""
    sides = []
    if box["y"] >= trick["y"] + trick["height"] - 1:
        sides.append("bottom")
    if box["y"] + box["height"] <= trick["y"] + 1:
        sides.append("top")
    if box["x"] + box["width"] <= trick["x"] + 1:
        sides.append("left")
    if box["x"] >= trick["x"] + trick["width"] - 1:
        sides.append("right")
    assert len(sides) == 1, (box, trick, sides)
    return sides[0]


def _inside(inner: dict[str, float], outer: dict[str, float]) -> bool:
    return (
        inner["x"] >= outer["x"] - 1
        and inner["y"] >= outer["y"] - 1
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 1
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 1
    )


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["x"] < b["x"] + b["width"] - 1
        and b["x"] < a["x"] + a["width"] - 1
        and a["y"] < b["y"] + b["height"] - 1
        and b["y"] < a["y"] + a["height"] - 1
    )


def _in_front(played: list[dict[str, Any]], boxes: dict[str, Any]) -> None:
    """Each card of the trick lies on its player's side of the middle of the table."""
    tx, ty = _centre(boxes["trick"])
    for card in played:
        side = _side(boxes["seats"][card["seat"]], boxes["trick"])
        x, y = _centre(card["box"])
        assert {"left": x < tx, "right": x > tx, "top": y < ty, "bottom": y > ty}[side], (
            card,
            side,
        )


def _fits_a_phone(page: Any) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the table is {width}px wide on a phone"


def _frames(page: Any) -> dict[str, Any]:
    return page.evaluate("() => JSON.parse(document.getElementById('replay').dataset.frames)")


# --- the replay, seat 0 at the bottom --------------------------------------------------------


@pytest.mark.parametrize("language", ["en", "fa"])
def test_the_replay_is_a_table_and_each_pass_goes_to_the_side_its_words_say(
    browser: Any, server: Server, world: World, language: str
) -> None:
    tab = Tab(browser, server, DESKTOP, locale="fa-IR" if language == "fa" else "en-US")
    try:
        tab.open(f"/matches/{world.replay_match}/")
        page = tab.page
        frames = _frames(page)
        assert frames["direction"] == "clockwise" and frames["players"] == 4
        for number, direction in enumerate(["left", "right", "across"]):
            page.evaluate("(hand) => window.bidelReplay.goto(hand, 0)", number)
            frame = frames["hands"][number]
            assert frame["pass_direction"] == direction
            assert WORDS[language][direction] in page.locator("#status").inner_text()
            # Every pass ends in the seat the frame names, its cards there.
            page.wait_for_function(STILL, timeout=LONG_MS)
            boxes = page.evaluate(BOXES)
            for giver, cards in enumerate(frame["passes"]):
                to = frame["pass_to"][giver]
                pile = page.locator(
                    f'#table .seat[data-seat="{to}"] .incoming[data-from="{giver}"]'
                )
                shown = pile.locator(".card").evaluate_all("(cs) => cs.map((c) => c.dataset.card)")
                assert sorted(shown) == sorted(cards), (giver, to)
                assert _inside(pile.bounding_box(), boxes["seats"][to])
            # Seat 0 at the bottom; its pass goes to the seat on the side the words say.
            assert _side(boxes["seats"][0], boxes["trick"]) == "bottom"
            assert _side(boxes["seats"][frame["pass_to"][0]], boxes["trick"]) == SIDE_OF[direction]
            # Clockwise: the next seat on the left, whichever way the page reads.
            sides = [_side(box, boxes["trick"]) for box in boxes["seats"]]
            assert sides == ["bottom", "left", "top", "right"], sides
            if number == 0:
                tab.shoot(f"table-replay-pass-{language}")
                assert _axe_violations(page) == []
        assert not tab.problems, tab.problems
    finally:
        tab.context.close()


@pytest.mark.parametrize("motion", ["moving", "reduced"])
def test_a_completed_trick_goes_to_its_winner_and_then_leaves_the_table(
    tab: Tab, world: World, motion: str
) -> None:
    page = tab.page
    if motion == "reduced":
        page.emulate_media(reduced_motion="reduce")
    tab.open(f"/matches/{world.replay_match}/")
    frames = _frames(page)
    first = frames["hands"][0]
    trick = first["tricks"][0]
    winner = trick["winner"]
    complete = 1 + len(trick["plays"])  # after the pass step, the trick's last card
    steps: list[dict[str, int]] = []
    page.evaluate(
        "() => { window.steps = []; document.getElementById('replay').addEventListener("
        "'bidel:step', (e) => window.steps.push(e.detail)); }"
    )
    page.evaluate("(step) => window.bidelReplay.goto(0, step)", complete - 1)
    page.wait_for_function(STILL, timeout=LONG_MS)
    page.get_by_role("button", name="Step forward").click()
    if motion == "reduced":  # no motion at all: the end at once
        assert page.evaluate(STILL)
    assert (
        f"{world.names[world.replay_match][winner]} takes it"
        in page.locator("#status").inner_text()
    )
    # The trick leans to its winner: attributed, its cards nearer the winner's seat.
    page.wait_for_function(STILL, timeout=LONG_MS)
    middle = page.locator("#table .trick")
    assert middle.get_attribute("data-winner") == str(winner)
    assert "taken" in (middle.get_attribute("class") or "")
    assert "winner" in (
        page.locator(f'#table .seat[data-seat="{winner}"]').get_attribute("class") or ""
    )
    boxes = page.evaluate(BOXES)
    assert [card["seat"] for card in boxes["played"]] == [s for s, _ in trick["plays"]]
    sx, sy = _centre(boxes["seats"][winner])
    tx, ty = _centre(boxes["trick"])
    centres = [_centre(card["box"]) for card in boxes["played"]]
    cx, cy = sum(x for x, _ in centres) / 4, sum(y for _, y in centres) / 4
    assert abs(sx - cx) + abs(sy - cy) < abs(sx - tx) + abs(sy - ty)
    assert _axe_violations(page) == []  # (each name under its card readable, leaning too)
    tab.shoot(f"table-trick-taken-{motion}")
    # The next card: the taken trick has left the table, the winner's points counted.
    page.get_by_role("button", name="Step forward").click()
    if motion == "reduced":
        assert page.evaluate(STILL)
    page.wait_for_function(
        "() => document.querySelector('#table .flight').children.length === 0", timeout=LONG_MS
    )
    page.wait_for_function(STILL, timeout=LONG_MS)
    second = first["tricks"][1]["plays"][0]
    shown = page.evaluate(BOXES)["played"]
    assert [card["seat"] for card in shown] == [second[0]]
    assert page.locator("#table .trick .card").evaluate_all("(cs) => cs.length") == 1
    assert page.locator("#table .trick").get_attribute("data-winner") is None
    points = page.locator(f'#table .seat[data-seat="{winner}"] .points').inner_text()
    assert int(points.split()[0]) == trick["taken"][winner]
    # Every render said where it stands (the contract analysis.js reads).
    steps = page.evaluate("() => window.steps")
    steps = [s for n, s in enumerate(steps) if not n or s != steps[n - 1]]  # (drawn again: resized)
    assert steps[-3:] == [
        {"hand": 0, "step": complete - 1, "played": complete - 2},
        {"hand": 0, "step": complete, "played": complete - 1},
        {"hand": 0, "step": complete + 1, "played": complete},
    ]
    if motion == "reduced":  # the passes too are where they go at once
        page.evaluate("() => window.bidelReplay.goto(1, 0)")
        assert page.evaluate(STILL)
        assert page.locator("#table .incoming .card").count() == 12
    page.evaluate("() => window.bidelReplay.goto(1, 5)")
    assert page.evaluate("() => window.steps.at(-1)") == {"hand": 1, "step": 5, "played": 4}
    assert page.locator("#share").get_attribute("href") == "#h2s5"


# --- tables of other sizes -------------------------------------------------------------------

TABLES = [("standard", 3), ("standard", 5), ("standard", 6), ("cancellation", 8)]


@pytest.fixture(scope="module")
def other_tables(world: World) -> dict[int, int]:
    """A finished match of each size of TABLES: players → match id."""
    code = (
        "from arena import services\n"
        "from arena.models import Match\n"
        "from engine.rules import RuleSet\n"
        "made = {}\n"
        f"for preset, players in {TABLES!r}:\n"
        "    rules = RuleSet.from_preset(preset, players=players)\n"
        "    seats = [services.SeatSpec(builtin=b) for b in ('low', 'random') * 4][:players]\n"
        "    match = services.match_create(kind=Match.Kind.CHALLENGE, seats=seats, rules=rules,"
        " hands=1, seed=11)\n"
        "    services.match_run(match_id=match.pk)\n"
        "    made[players] = match.pk\n"
        "import json\n"
        "print(json.dumps(made))\n"
    )
    return {int(k): v for k, v in json.loads(_in_world(world, code)).items()}


@pytest.mark.parametrize("players", [players for _, players in TABLES])
@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_tables_of_three_to_eight_seats_are_drawn_round_the_felt_and_fit(
    browser: Any, server: Server, other_tables: dict[int, int], players: int, viewport: str
) -> None:
    tab = Tab(browser, server, DESKTOP if viewport == "desktop" else PHONE)
    try:
        tab.open(f"/matches/{other_tables[players]}/")
        page = tab.page
        frames = _frames(page)
        assert frames["players"] == players
        hand = frames["hands"][0]
        # The first trick but its last card (complete, it leans towards its winner).
        short = len(hand["tricks"][0]["plays"]) - 1 + (1 if hand["passes"] else 0)
        page.evaluate("(step) => window.bidelReplay.goto(0, step)", short)
        page.wait_for_function(STILL, timeout=LONG_MS)
        boxes = page.evaluate(BOXES)
        seats = boxes["seats"]
        assert len(seats) == players
        titles = page.locator("#table .seat h3").all_inner_texts()
        assert [re.findall(r"· seat (\d+) ·", t) for t in titles] == [
            [str(n + 1)] for n in range(players)
        ]
        for n, box in enumerate(seats):  # no seat on another, none on the middle
            assert not _overlap(box, boxes["trick"]), n
            for m in range(n):
                assert not _overlap(box, seats[m]), (m, n)
        # Seat 0 at the bottom, the next seat clockwise on its left, the last on its right.
        assert _side(seats[0], boxes["trick"]) == "bottom"
        assert _centre(seats[1])[0] < _centre(boxes["trick"])[0] < _centre(seats[-1])[0]
        assert len(boxes["played"]) == players - 1
        _in_front(boxes["played"], boxes)
        if viewport == "phone":
            _fits_a_phone(page)
        else:
            assert _axe_violations(page) == []
        tab.shoot(f"table-{players}-seats-{viewport}")
        assert not tab.problems, tab.problems
    finally:
        tab.context.close()


# --- a person at the table -------------------------------------------------------------------


def _persons_game(world: World, rules: str, seat: int, seed: int) -> tuple[int, str]:
    """A person's game in ``seat`` against three built-ins: its match and the seat's secret."""
    code = (
        "from arena import services\n"
        "opponents = [services.SeatSpec(builtin=b) for b in ('heuristic', 'low', 'random')]\n"
        "match, token = services.human_game_create(user=None, opponents=opponents, "
        f"rules={rules!r}, hands=1, seat={seat}, seed={seed})\n"
        "print(match.pk, token)\n"
    )
    number, token = _in_world(world, code).split()
    return int(number), token


def _sit_down(
    browser: Any,
    server: Server,
    world: World,
    language: str,
    viewport: Any,
    sent: list[str] | None = None,
    **game: Any,
) -> Tab:
    """A tab at a new person's game (the seat's cookie set, as /play/ sets it); ``sent``
    collects what the page sends on its WebSockets."""
    number, token = _persons_game(world, **game)
    tab = Tab(browser, server, viewport, locale="fa-IR" if language == "fa" else "en-US")
    tab.context.add_cookies(
        [{"name": "bidel_seat", "value": token, "url": server.url, "httpOnly": True}]
    )
    if sent is not None:
        tab.page.on("websocket", lambda ws: ws.on("framesent", lambda data: sent.append(data)))
    tab.open(f"/play/{number}/")
    return tab


def _check_the_pass_at_the_table(page: Any, ask: dict[str, Any], seat: int, language: str) -> int:
    """The person's hand is at the bottom of the table, in their seat; the seat their pass goes
    to is marked, named, and on the side the words say. Returns that seat."""
    view = ask["view"]
    direction = view["pass_direction"]
    to = (seat + view["pass_offset"]) % len(view["cards_left"])
    target = page.locator(f'#table .seat[data-seat="{to}"]')
    page.wait_for_function(
        "(to) => document.querySelector(`#table .seat[data-seat='${to}']`)"
        ".classList.contains('pass-target')",
        arg=to,
        timeout=LONG_MS,
    )
    assert page.locator("#table .seat.pass-target").count() == 1
    assert WORDS[language][direction] in page.locator("#status").inner_text()
    names = json.loads(page.locator("#replay").get_attribute("data-names"))  # type: ignore[arg-type]
    assert names[to] in page.locator("#prompt").inner_text()
    page.wait_for_function(STILL, timeout=LONG_MS)
    boxes = page.evaluate(BOXES)
    mine = page.locator(f'#table .seat[data-seat="{seat}"]')
    assert mine.locator("#my-seat #hand button.card").count() == len(view["hand"])
    assert _side(boxes["seats"][seat], boxes["trick"]) == "bottom"
    assert (
        page.locator("#hand").bounding_box()["y"] >= boxes["trick"]["y"] + boxes["trick"]["height"]
    )  # type: ignore[index]
    assert _side(boxes["seats"][to], boxes["trick"]) == SIDE_OF[direction]
    assert target.bounding_box() == page.locator("#table .seat.pass-target").bounding_box()
    return to


def _check_the_pass_went_there(page: Any, seat: int, to: int, cards: list[str]) -> None:
    """The frame names the same seat, and the passed cards are drawn in it at the hand's
    start (stepped back to there, then live again)."""
    page.wait_for_function(
        "(seat) => { const hs = window.bidelLive.data.hands, h = hs[hs.length - 1];"
        " return Boolean(h && h.pass_to && h.pass_to[seat] !== undefined); }",
        arg=seat,
        timeout=LONG_MS,
    )
    frames = page.evaluate("() => window.bidelLive.data.hands")
    assert frames[-1]["pass_to"][seat] == to
    page.evaluate("(hand) => window.bidelReplay.goto(hand, 0)", len(frames) - 1)
    pile = page.locator(f'#table .seat[data-seat="{to}"] .incoming[data-from="{seat}"]')
    pile.wait_for(timeout=LONG_MS)
    page.wait_for_function(STILL, timeout=LONG_MS)
    shown = pile.locator(".card").evaluate_all("(cs) => cs.map((c) => c.dataset.card)")
    assert sorted(shown) == sorted(cards)
    box = page.locator(f'#table .seat[data-seat="{to}"]').bounding_box()
    assert _inside(pile.bounding_box(), box)  # type: ignore[arg-type]
    page.locator("#live").click()  # and back to the game as it is played


GAMES = {  # language, viewport, rules, the person's seat, seed
    "en-desktop": ("en", DESKTOP, "standard", 2, 31),
    "fa-phone": ("fa", PHONE, "persian", 1, 32),
    "en-phone": ("en", PHONE, "standard", 3, 33),
    "fa-desktop": ("fa", DESKTOP, "persian", 2, 34),
}


@pytest.mark.parametrize("game", list(GAMES))
def test_a_person_plays_a_whole_hand_at_the_table_seen_from_their_own_seat(
    browser: Any, server: Server, world: World, game: str
) -> None:
    language, viewport, rules, seat, seed = GAMES[game]
    with celery_worker(
        env=world.env,
        hostname=f"table-{game}@browser",
        queues=["celery", "runner", PEOPLE_QUEUE],
        concurrency=2,
    ):
        tab = _sit_down(
            browser, server, world, language, viewport, rules=rules, seat=seat, seed=seed
        )
        page = tab.page
        try:
            decisions, passed, mid_trick = 0, False, False
            while True:
                page.wait_for_function(WAIT_FOR_A_QUESTION, timeout=LONG_MS)
                seen = page.evaluate(PLAY_STATE)
                if seen["closed"]:
                    break
                ask = seen["pending"]
                to = None
                if ask["decision"] == "pass" and not passed:
                    to = _check_the_pass_at_the_table(page, ask, seat, language)
                    if viewport is PHONE:
                        _fits_a_phone(page)
                    assert _axe_violations(page) == []
                    tab.shoot(f"table-play-{game}-pass")
                if ask["decision"] == "play" and ask["view"]["trick"] and not mid_trick:
                    # The cards played so far lie in front of their players.
                    trick = ask["view"]["trick"]
                    page.wait_for_function(
                        "(trick) => JSON.stringify([...document.querySelectorAll("
                        "'#table .trick .played')].map((p) => [Number(p.dataset.seat),"
                        " p.querySelector('.card').dataset.card])) === JSON.stringify(trick)",
                        arg=trick,
                        timeout=LONG_MS,
                    )
                    page.wait_for_function(STILL, timeout=LONG_MS)
                    _in_front(page.evaluate(BOXES)["played"], page.evaluate(BOXES))
                    legal = page.locator("#hand button.card:not([disabled])")
                    assert sorted(
                        legal.evaluate_all("(bs) => bs.map((b) => b.dataset.card)")
                    ) == sorted(ask["view"]["legal"])
                    if viewport is PHONE:
                        _fits_a_phone(page)
                    assert _axe_violations(page) == []
                    tab.shoot(f"table-play-{game}-mid-trick")
                    mid_trick = True
                _answer(page, ask, by_keyboard=decisions % 2 == 1)
                decisions += 1
                if to is not None:
                    _check_the_pass_went_there(page, seat, to, ask["view"]["hand"][: ask["count"]])
                    passed = True
            assert passed and mid_trick and decisions >= 10
            # The game's end stays on the table: the last trick attributed to its winner.
            page.wait_for_function("() => window.bidelLive.stored", timeout=LONG_MS)
            last = page.evaluate("() => window.bidelLive.data.hands.at(-1).tricks.at(-1)")
            page.wait_for_function(
                "(w) => { const t = document.querySelector('#table .trick');"
                " return t.classList.contains('taken') && t.dataset.winner === String(w); }",
                arg=last["winner"],
                timeout=LONG_MS,
            )
            page.wait_for_function(STILL, timeout=LONG_MS)
            assert page.locator(f'#table .seat[data-seat="{last["winner"]}"].winner').count() == 1
            assert _axe_violations(page) == []
            tab.shoot(f"table-play-{game}-over")
            assert not tab.problems, tab.problems
        finally:
            tab.context.close()


# --- the coach's hint ------------------------------------------------------------------------


def _decide(
    ask_id: int, decision: str, hint: dict[str, Any] | None, **extra: Any
) -> dict[str, Any]:
    """A question as the seat's feed sends it (play.js reads these fields of the view)."""
    hand = ["2C", "7C", "4D", "QS", "AS", "3H", "KH"]
    view = {
        "seat": 1,
        "hand_number": 0,
        "hand": hand,
        "legal": ["QS", "AS"] if decision == "play" else hand,
        "trick": [],
        "tricks": [],
        "pass_direction": "left",
        "pass_offset": 1,
        "passed": [],
        "received": [],
        "cards_left": [7, 7, 7, 7],
        "trump": None,
        "totals": [0, 0, 0, 0],
    }
    message = {
        "type": "decide",
        "id": ask_id,
        "decision": decision,
        "view": view,
        "until": time.time() + 30,
        **extra,
    }
    if hint is not None:
        message["hint"] = hint
    return message


@pytest.mark.parametrize("language", ["en", "fa"])
def test_the_hint_toggle_shows_only_with_a_hint_and_marks_the_cards_it_suggests(
    browser: Any, server: Server, world: World, language: str
) -> None:
    sent: list[Any] = []
    tab = _sit_down(
        browser, server, world, language, DESKTOP, sent, rules="standard", seat=1, seed=35
    )
    page = tab.page
    try:
        page.wait_for_function("() => window.bidelPlay.connected", timeout=LONG_MS)
        toggle = page.locator("#hint-toggle")
        feed = "(message) => window.bidelPlay.feed(message)"
        page.evaluate(feed, _decide(1, "play", None))
        assert not toggle.is_visible()
        page.evaluate(feed, _decide(2, "play", {"action": "QS", "why": "the safest card"}))
        assert toggle.is_visible() and toggle.get_attribute("aria-pressed") == "false"
        assert page.locator("#hand .hinted").count() == 0  # off until asked for
        toggle.click()
        assert toggle.get_attribute("aria-pressed") == "true"
        hinted = page.locator("#hand button.card.hinted")
        assert hinted.evaluate_all("(bs) => bs.map((b) => b.dataset.card)") == ["QS"]
        line = page.locator("#hint-line").inner_text()
        if language == "en":
            assert line == "The coach suggests: queen of spades — the safest card"
            assert hinted.get_attribute("aria-label") == "queen of spades, coach suggests"
        else:
            assert line.startswith("مربی پیشنهاد می‌کند: بی‌بی پیک")
        assert _axe_violations(page) == []
        tab.shoot(f"table-hint-{language}")
        # A pass: each card suggested is marked; the toggle stays on.
        page.evaluate(feed, _decide(3, "pass", {"action": ["QS", "AS", "KH"]}, count=3))
        marked = page.locator("#hand button.card.hinted")
        assert sorted(marked.evaluate_all("(bs) => bs.map((b) => b.dataset.card)")) == [
            "AS",
            "KH",
            "QS",
        ]
        # A question without a hint: no toggle, nothing marked.
        page.evaluate(feed, _decide(4, "play", None))
        assert not toggle.is_visible() and page.locator("#hand .hinted").count() == 0
        assert page.locator("#hint-line").inner_text() == ""
        assert sent == []  # nothing was played for the person: only what they choose is sent
        page.locator('#hand button[data-card="AS"]').click()
        page.wait_for_function("() => window.bidelPlay.sentFor === 4", timeout=LONG_MS)
        assert [json.loads(data) for data in sent] == [{"id": 4, "action": "AS"}]
        page.locator("#leave").click()  # (the game no runner began ends here)
        assert not tab.problems, tab.problems
    finally:
        tab.context.close()
