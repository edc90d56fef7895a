"""``montecarlo``: determinized sampling plus rollouts with the engine.

For each play with a choice, it samples deals consistent with its view
(:class:`bots_sdk.sampling.Simulation`), plays every legal card in each sample, finishes the
hand with the ducking rollout policy (:mod:`bots_sdk.rollout`), and keeps the card with the
best mean of (its score minus the others' mean score) — relative, so a moon shot counts as it
should. The same samples serve every
card (common random numbers). Passing and the other decisions are the heuristic's.

>>> from engine.rules import RuleSet
>>> from engine.state import GameState
>>> from bots_sdk.view import View
>>> state = GameState(RuleSet.from_preset("standard", pass_cycle=["hold"]), seed=2)
>>> state.apply("2C")
>>> view = View.from_observation(state.observation(state.current_seat))
>>> bot = MonteCarloBot(seed=1, samples=4)
>>> bot.play(view) in view.legal, bot.last_samples  # three cards to choose from, 4 samples
(True, 4)
"""

from __future__ import annotations

import time

from bots_sdk.builtin.heuristic import HeuristicBot
from bots_sdk.rollout import play_ducking
from bots_sdk.sampling import SamplingError
from bots_sdk.view import View


class MonteCarloBot(HeuristicBot):
    """Heuristic passing; plays chosen by sampled rollouts: ``samples`` of them (fewer when
    its clock runs low), or, given ``think``, as many as fit in that many seconds per play
    (at least four) — then a faster engine means more samples, and a stronger bot.

    >>> from engine.rules import RuleSet
    >>> from engine.state import GameState
    >>> state = GameState(RuleSet.from_preset("standard", pass_cycle=["hold"]), seed=2)
    >>> state.apply("2C")
    >>> view = View.from_observation(state.observation(state.current_seat))
    >>> MonteCarloBot(seed=1, think=0.01).play(view) in view.legal
    True
    """

    def __init__(self, seed: int = 0, samples: int = 20, think: float | None = None) -> None:
        super().__init__(seed)
        self.samples = samples
        self.think = think
        #: How many samples the last play searched (0 when it had no choice or no search).
        self.last_samples = 0

    def play(self, view: View) -> str:
        legal = view.legal
        self.last_samples = 0
        if len(legal) == 1:
            return legal[0]
        try:
            simulation = self.simulation(view)
        except (SamplingError, ValueError):
            return super().play(view)
        samples = self.samples
        if view.time_left is not None:
            samples = max(4, min(samples, int(view.time_left * 200)))
        deadline = None
        if self.think is not None:  # a clock, not a count: sample until it runs out
            deadline, samples = time.perf_counter() + self.think, 1 << 30
        seat, others = view.seat, view.players - 1
        totals = dict.fromkeys(legal, 0.0)
        for done in range(samples):
            if deadline is not None and done >= 4 and time.perf_counter() > deadline:
                break
            try:
                root = simulation.sample()
            except SamplingError:
                return super().play(view)
            for card in legal:
                state = root.clone()
                state.apply(card)
                play_ducking(state, self.rng)
                scores = state.history[-1].scores if state.history else state.points_taken()
                totals[card] += scores[seat] - (sum(scores) - scores[seat]) / others
            self.last_samples = done + 1
        return min(legal, key=lambda card: totals[card])
