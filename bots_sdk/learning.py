"""Learning environments over the engine: every seat of a table as a PettingZoo AEC
environment (:class:`HeartsEnv`), or one seat against built-in bots as a Gymnasium
environment (:class:`SeatEnv`). Both work under every preset and player count.

Needs the learning extra (``pip install 'bidel-sdk[learn]'``: PettingZoo, Gymnasium, NumPy);
the engine and the rest of the SDK do not. The encoding itself (:func:`encode`,
:func:`action_mask`, :func:`action_of`, ...) lives in :mod:`bots_sdk.observation`, which needs
only numpy: a trained bot imports it on the platform to see what it was trained on.

**Actions** are ``Discrete(58)`` (:data:`ACTIONS`): ``13 * suit + rank`` for a card to pass
or play (suits ``C D H S``, ranks ``2`` .. ``A``: 0 is ``2C``, 51 is ``AS``), then the trump
suits ``C D H S`` (52..55, Hokm's hakem) and the moon choices ``add``, ``subtract`` (56, 57).
Passing is one card per step, as in the engine: a seat passing three cards acts three times
in a row. :func:`action_of` and :func:`text_of` convert to and from the engine's texts.

**Observations** are ``{"observation": float32 vector, "action_mask": int8[58]}``. The vector
is built by :func:`encode` from the seat's SDK :class:`~bots_sdk.view.View` (the same view a
bot gets, so it never holds another seat's hidden cards); seats are counted from the observer
(0 is itself, 1 the next to play, ...). :func:`observation_layout` names its blocks.

**Rewards** are minus the points a seat is charged, paid as they become public: minus the
card points of each trick it takes, then at the end of the hand the rest of its hand score
(moon, Omnibus jack, kitty), so a hand's rewards add up to minus its score and a game's to
minus its total. ``reward="relative"`` pays that minus the mean of the other seats' (a moon
shot then counts as it should). An episode is one hand (``episode="hand"``, a redealt hand
included) or one game to the target (``episode="game"``).

**Illegal actions** (outside the mask) are replaced by the referee's fallback, as in a match
(the lowest legal card, else the first legal action), and flagged by ``{"illegal": True}`` in
the acting seat's info; ``illegal="raise"`` raises :class:`~engine.state.IllegalMoveError`
instead, leaving the state unchanged.

**Seeds**: ``reset(seed=s)`` deals game ``s`` (the deals of ``GameState(rules, seed=s)`` and
of a match with seed ``s``); a later ``reset()`` draws the next game's seed from a generator
seeded by ``s``. A never-seeded environment starts as if seeded with 0: nothing is random
unless asked.

>>> env = HeartsEnv("standard", illegal="raise")
>>> env.reset(seed=1)
>>> env.agent_selection, env.num_agents
('player_0', 4)
>>> observation, reward, terminated, truncated, info = env.last()
>>> int(observation["action_mask"].sum()), observation["observation"].shape
(13, (713,))
>>> env.step(action_of("QS"))  # player_0 passes the queen of spades (if it holds her)
Traceback (most recent call last):
...
engine.state.IllegalMoveError: seat 0 cannot pass QS: not in hand
>>> env.step(int(observation["action_mask"].argmax()))
>>> text_of(int(observation["action_mask"].argmax())), env.agent_selection
('2C', 'player_0')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

try:
    import gymnasium
    import numpy as np
    from gymnasium import spaces
    from gymnasium.utils import seeding
    from pettingzoo import AECEnv
except ImportError as exc:  # the extra is not installed
    raise ImportError(
        "bots_sdk.learning needs the learning extra: pip install 'bidel-sdk[learn]' "
        f"({exc.name or exc} is missing)"
    ) from exc

from bots_sdk.bot import Bot, lowest
from bots_sdk.loader import load_bot
from bots_sdk.observation import (
    ACTIONS,
    BOUND,
    Observation,
    action_mask,
    action_of,
    encode,
    observation_layout,
    observation_size,
    observe,
    text_of,
)
from bots_sdk.protocol import bot_seed
from bots_sdk.view import View
from engine.rules import RuleSet
from engine.state import GameState, IllegalMoveError, Phase

Episode = Literal["hand", "game"]
Reward = Literal["points", "relative"]
Illegal = Literal["fallback", "raise"]


def observation_space(rules: RuleSet) -> spaces.Dict:
    """The space of :func:`encode`'s observations under ``rules``."""
    return spaces.Dict(
        {
            "observation": spaces.Box(
                low=-BOUND, high=BOUND, shape=(observation_size(rules),), dtype=np.float32
            ),
            "action_mask": spaces.Box(low=0, high=1, shape=(ACTIONS,), dtype=np.int8),
        }
    )


def _action_index(action: Any) -> int:
    """An action as a plain int (NumPy integers and 0-d arrays accepted)."""
    try:
        index = int(action)
    except (TypeError, ValueError):
        raise ValueError(f"an action is an integer 0..{ACTIONS - 1}, not {action!r}") from None
    if not 0 <= index < ACTIONS or index != action:
        raise ValueError(f"an action is an integer 0..{ACTIONS - 1}, not {action!r}")
    return index


class _Table:
    """One episode's game and the rewards it has paid: the engine state plus bookkeeping
    shared by both environments."""

    def __init__(self, rules: RuleSet, seed: int, episode: Episode, reward: Reward) -> None:
        self.game = GameState(rules, seed=seed)
        self.episode = episode
        self.reward = reward
        self.n = rules.players
        self.banked = [0] * self.n  # minus the scores of this episode's finished hands
        self.potential = self._potential()
        self.over = False

    def view(self, seat: int) -> View:
        return View.from_observation(self.game.observation(seat))

    def resolve(self, action: Any, illegal: Illegal) -> tuple[str, bool]:
        """The text of a learner's action, or of the fallback when it is not legal here;
        and whether it was replaced."""
        legal = self.game.legal_actions()
        try:
            text = text_of(_action_index(action))
        except ValueError:
            if illegal == "raise":
                raise
            text = ""
        if text in legal:
            return text, False
        if illegal == "raise":
            self.game.clone().apply(text)  # raises, naming the rule broken
            raise IllegalMoveError(f"{text!r} is not legal here")
        cards = [c for c in legal if len(c) == 2]
        return (lowest(cards) if cards else legal[0]), True

    def _potential(self) -> list[float]:
        """Minus what each seat has been charged so far, from public facts only."""
        if self.game.phase in (Phase.HAND_OVER, Phase.GAME_OVER):
            taken = [0] * self.n
        else:
            taken = self.game.observation(0).points_taken
        charged = [float(b - t) for b, t in zip(self.banked, taken)]
        if self.reward == "points":
            return charged
        total = sum(charged)
        return [c - (total - c) / (self.n - 1) for c in charged]

    def apply(self, text: str) -> list[float]:
        """Take an action for the seat to act; the rewards it pays, by seat. A finished hand
        is scored and, unless the episode ends with it, the next one dealt."""
        self.game.apply(text)
        self.settle()
        before, self.potential = self.potential, self._potential()
        return [after - old for after, old in zip(self.potential, before)]

    def settle(self, notify: Sequence[Bot | None] = ()) -> None:
        """Past the end of a hand: bank its scores and deal on, or end the episode."""
        game = self.game
        while game.phase in (Phase.HAND_OVER, Phase.GAME_OVER):
            hand = game.history[-1]
            if not hand.void:
                self.banked = [b - s for b, s in zip(self.banked, hand.scores)]
            for seat, bot in enumerate(notify):
                if bot is not None:
                    view = self.view(seat)
                    bot.on_hand_end(view)
                    if game.phase is Phase.GAME_OVER:
                        bot.on_game_end(view)
            if game.phase is Phase.GAME_OVER or (self.episode == "hand" and not hand.void):
                self.over = True
                return
            game.next_hand()


def _rules_of(rules: str | Mapping[str, Any] | RuleSet) -> RuleSet:
    return RuleSet.from_spec(rules)


def _check_options(episode: str, reward: str, illegal: str, render_mode: str | None) -> None:
    """The environments' options, checked in one place (a ValueError names the bad one)."""
    for name, value, allowed in (
        ("episode", episode, ("hand", "game")),
        ("reward", reward, ("points", "relative")),
        ("illegal", illegal, ("fallback", "raise")),
        ("render_mode", render_mode, (None, "ansi", "human")),
    ):
        if value not in allowed:
            raise ValueError(
                f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}"
            )


class HeartsEnv(AECEnv):  # type: ignore[misc]  # (PettingZoo ships no type information)
    """Every seat of one table, as a PettingZoo AEC environment: agents ``player_0`` ..
    ``player_{n-1}`` (seat numbers), acting in the engine's order (see the module docstring
    for actions, observations, rewards and seeds).

    ``rules`` is a preset name, a rules object (``{"preset": ..., ...}``) or a ``RuleSet``.
    ``illegal``: what an action outside the mask does (module docstring).
    """

    metadata: dict[str, Any] = {
        "name": "bidel_hearts_v0",
        "render_modes": ["ansi", "human"],
        "is_parallelizable": False,
    }

    def __init__(
        self,
        rules: str | Mapping[str, Any] | RuleSet = "standard",
        *,
        episode: Episode = "hand",
        reward: Reward = "points",
        illegal: Illegal = "fallback",
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        _check_options(episode, reward, illegal, render_mode)
        self.illegal: Illegal = illegal
        self.rules = _rules_of(rules)
        self.episode: Episode = episode
        self.reward: Reward = reward
        self.render_mode = render_mode
        self.possible_agents: list[str] = [f"player_{s}" for s in range(self.rules.players)]
        self._seat = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        self.observation_spaces: dict[str, spaces.Dict] = {
            agent: observation_space(self.rules) for agent in self.possible_agents
        }
        self.action_spaces: dict[str, spaces.Discrete] = {
            agent: spaces.Discrete(ACTIONS) for agent in self.possible_agents
        }
        self._seeds: np.random.Generator | None = None
        self._table: _Table | None = None
        self.agents: list[str] = []
        self.rewards: dict[str, float] = {}
        self._cumulative_rewards: dict[str, float] = {}
        self.terminations: dict[str, bool] = {}
        self.truncations: dict[str, bool] = {}
        self.infos: dict[str, dict[str, Any]] = {}
        self.agent_selection: str = self.possible_agents[0]

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    @property
    def game(self) -> GameState:
        """The engine state of the episode (the referee's view: give agents ``observe``)."""
        if self._table is None:
            raise RuntimeError("call reset() first")
        return self._table.game

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is None and self._seeds is None:
            seed = 0  # deterministic unless asked otherwise (module docstring)
        if seed is not None:
            self._seeds, _ = seeding.np_random(seed)
            game_seed = seed
        else:
            assert self._seeds is not None
            game_seed = int(self._seeds.integers(2**62))
        self._table = _Table(self.rules, game_seed, self.episode, self.reward)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self._select()

    def _select(self) -> None:
        seat = self.game.current_seat
        self.agent_selection = self.possible_agents[0 if seat is None else seat]

    def view(self, agent: str) -> View:
        """The SDK view of ``agent``'s seat now: what :meth:`observe` encodes."""
        return View.from_observation(self.game.observation(self._seat[agent]))

    def observe(self, agent: str) -> Observation:
        return observe(self.view(agent))

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        assert self._table is not None
        text, replaced = self._table.resolve(action, self.illegal)
        self._cumulative_rewards[agent] = 0.0
        paid = self._table.apply(text)
        self.rewards = {a: paid[self._seat[a]] for a in self.agents}
        self.infos[agent] = {"illegal": True} if replaced else {}
        self._accumulate_rewards()
        if self._table.over:
            self.terminations = dict.fromkeys(self.agents, True)
        self._select()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        """``ansi``: the table as text; ``human``: printed too."""
        return _render(self.render_mode, None if self._table is None else self.game)

    def close(self) -> None:
        self._table = None


def _render(mode: str | None, game: GameState | None) -> str | None:
    """Both environments' ``render``: nothing without a mode or a table."""
    if mode is None or game is None:
        return None
    text = _describe(game)
    if mode == "human":
        print(text)
    return text


def _describe(game: GameState) -> str:
    trick = " ".join(card for _, card in game.observation(0).trick)
    return (
        f"hand {game.hand_number} ({game.phase.value}), seat to act {game.current_seat}, "
        f"trick [{trick}], points {game.points_taken()}, totals {game.totals}"
    )


class SeatEnv(gymnasium.Env[Observation, np.int64]):
    """One seat of a table as a Gymnasium environment; the other seats are played by bots
    (built-in names, or bot files loaded in this process: only your own, it is unsandboxed),
    called with their SDK views as the referee would.

    ``opponents`` is one name for every other seat or one per other seat, in seat order.
    Observations, actions, rewards and seeds are :class:`HeartsEnv`'s (module docstring);
    an episode ends at the end of the hand (or game) and never stops early (no truncation).

    >>> env = SeatEnv("standard", opponents="low")
    >>> observation, info = env.reset(seed=3)
    >>> total, terminated = 0.0, False
    >>> while not terminated:
    ...     legal = observation["action_mask"].nonzero()[0]
    ...     observation, reward, terminated, truncated, info = env.step(int(legal[0]))
    ...     total += float(reward)
    >>> total == -env.game.history[-1].scores[0]
    True
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi", "human"]}

    def __init__(
        self,
        rules: str | Mapping[str, Any] | RuleSet = "standard",
        *,
        opponents: str | Sequence[str] = "random",
        seat: int = 0,
        episode: Episode = "hand",
        reward: Reward = "points",
        illegal: Illegal = "fallback",
        render_mode: str | None = None,
    ) -> None:
        self.rules = _rules_of(rules)
        n = self.rules.players
        if not 0 <= seat < n:
            raise ValueError(f"seat must be 0..{n - 1}, not {seat}")
        names = [opponents] * (n - 1) if isinstance(opponents, str) else list(opponents)
        if len(names) != n - 1:
            raise ValueError(f"{n} seats need {n - 1} opponents, not {len(names)}")
        _check_options(episode, reward, illegal, render_mode)
        self.illegal: Illegal = illegal
        self.opponents = names
        self.seat = seat
        self.episode: Episode = episode
        self.reward: Reward = reward
        self.render_mode = render_mode
        self.observation_space = cast(spaces.Space[Observation], observation_space(self.rules))
        self.action_space = spaces.Discrete(ACTIONS)
        self._table: _Table | None = None
        self._bots: list[Bot | None] = []

    @property
    def game(self) -> GameState:
        """The engine state of the episode (the referee's view)."""
        if self._table is None:
            raise RuntimeError("call reset() first")
        return self._table.game

    def view(self) -> View:
        """The learner's SDK view now: what the observation encodes. A policy that scores
        cards from views (as a submitted bot does) can act from it."""
        return View.from_observation(self.game.observation(self.seat))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        if seed is None and self._np_random is None:
            seed = 0  # deterministic unless asked otherwise (module docstring)
        super().reset(seed=seed)
        game_seed = int(self.np_random.integers(2**62)) if seed is None else seed
        self._table = _Table(self.rules, game_seed, self.episode, self.reward)
        others = iter(self.opponents)
        self._bots = [
            None if s == self.seat else load_bot(next(others), seed=bot_seed(game_seed, 0, s))
            for s in range(self.rules.players)
        ]
        self._advance()
        return observe(self.view()), {}

    def step(self, action: Any) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        table = self._table
        if table is None:
            raise RuntimeError("call reset() first")
        if table.over:
            raise RuntimeError("the episode is over: call reset()")
        before = table.potential[self.seat]
        text, replaced = table.resolve(action, self.illegal)
        table.game.apply(text, self.seat)
        table.settle(self._bots)
        table.potential = table._potential()
        self._advance()
        reward = table.potential[self.seat] - before
        if self.render_mode == "human":
            self.render()
        info = {"illegal": True} if replaced else {}
        return observe(self.view()), reward, table.over, False, info

    def _advance(self) -> None:
        """Let the bots act until it is the learner's turn or the episode is over."""
        table = self._table
        assert table is not None
        game = table.game
        while not table.over and game.current_seat != self.seat:
            seat = game.current_seat
            assert seat is not None
            bot = self._bots[seat]
            assert bot is not None
            view = table.view(seat)
            try:
                if game.phase is Phase.PASS:
                    for card in bot.pass_cards(view):
                        game.apply(card, seat)
                elif game.phase is Phase.PLAY:
                    game.apply(bot.play(view), seat)
                elif game.phase is Phase.DECLARE_TRUMP:
                    game.apply(bot.declare_trump(view), seat)
                else:
                    game.apply(bot.choose_moon(view), seat)
            except IllegalMoveError as exc:
                raise IllegalMoveError(f"opponent {bot.name or type(bot).__name__}: {exc}") from exc
            table.settle(self._bots)
        table.potential = table._potential()

    def render(self) -> str | None:
        """``ansi``: the table as text; ``human``: printed too."""
        return _render(self.render_mode, None if self._table is None else self.game)


__all__ = [
    "ACTIONS",
    "HeartsEnv",
    "SeatEnv",
    "action_mask",
    "action_of",
    "encode",
    "observation_layout",
    "observation_space",
    "observe",
    "text_of",
]
