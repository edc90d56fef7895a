"""The coach at a person's seat: with each question the referee sends, the strong reference's
answer from the person's own view (``hint``), legal, before the person's clock starts; a
coach that fails gives no hint and costs the person nothing."""

from __future__ import annotations

from typing import Any

from bots_sdk import Bot
from bots_sdk.builtin import make_builtin
from bots_sdk.referee.jobs import Job
from bots_sdk.referee.participants import Participant
from bots_sdk.referee.players import PersonLimits, PersonPlayer
from bots_sdk.referee.runner import TimeControl, run_match

CLOCK = TimeControl(30.0, 60.0, timeout_spends_bank=True)


class Page:
    """An open page that answers each question at once: the hint when there is one, else
    the first legal card (or the first cards of the hand to pass)."""

    def __init__(self) -> None:
        self.questions: list[dict[str, Any]] = []
        self.refused: list[dict[str, Any]] = []
        self.pending: dict[str, Any] | None = None

    def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "decide":
            self.questions.append(message)
            self.pending = message
        if message["type"] == "refused":
            self.refused.append(message)

    def receive(self, timeout: float) -> Any:
        ask, self.pending = self.pending, None
        if ask is None:
            return None
        if "hint" in ask:
            return {"id": ask["id"], "action": ask["hint"]["action"]}
        view = ask["view"]
        action = view["hand"][: ask["count"]] if ask["decision"] == "pass" else view["legal"][0]
        return {"id": ask["id"], "action": action}

    def present(self) -> bool:
        return True


def _play(page: Page, coach: Bot | None, rules: str = "standard") -> Any:
    seats = [Participant.of_person("t")] + [Participant.of_builtin("low")] * 3
    return run_match(
        rules,
        7,
        seats,
        hands=1,
        people=lambda _: PersonPlayer(page, PersonLimits(away=600, game=600), coach=coach),
        human_clock=CLOCK,
    )


def test_every_question_carries_the_coachs_legal_answer_and_following_it_is_accepted() -> None:
    for rules in ("standard", "persian"):
        page = Page()
        game = _play(page, make_builtin("strong"), rules).games[0]
        assert page.questions and all("hint" in q for q in page.questions), rules
        assert {q["decision"] for q in page.questions} == {"pass", "play"}, rules
        for question in page.questions:
            hint, view = question["hint"]["action"], question["view"]
            if question["decision"] == "play":
                assert hint in view["legal"]
            else:
                assert len(hint) == question["count"] and set(hint) <= set(view["hand"])
        assert page.refused == [] and not game.seats[0].replaced and not game.seats[0].faults


def test_no_coach_no_hint_and_a_failing_coach_gives_none_and_costs_nothing() -> None:
    class Broken(Bot):
        def pass_cards(self, view: Any) -> list[str]:
            return ["XX", "YY", "ZZ"]  # not a pass: no hint

        def play(self, view: Any) -> str:
            raise RuntimeError("the coach fell over")

    for coach in (None, Broken()):
        page = Page()
        game = _play(page, coach).games[0]
        assert page.questions and not any("hint" in q for q in page.questions)
        assert not game.seats[0].replaced and not game.seats[0].faults


def test_a_job_says_whether_its_people_are_coached() -> None:
    job = Job(
        kind="match",
        ref=1,
        claim="t",
        rules="standard",
        seed=5,
        seats=(Participant.of_person("t"),) + (Participant.of_builtin("low"),) * 3,
        coach=True,
    )
    assert Job.from_dict(job.to_dict()).coach is True
    old = job.to_dict()
    del old["person"]["coach"]  # a job from before the coach: none
    assert Job.from_dict(old).coach is False
