"""Train the learned bot: a linear softmax policy over per-card features (``bot.py``),
improved by REINFORCE on hands played in :class:`bots_sdk.learning.SeatEnv` against the
built-in bots, on one CPU core.

    .venv/bin/python examples/learned/train.py [--hands 30000] [--seed 1]

Writes ``weights.npz`` beside ``bot.py``. Deterministic: the same seed and hand count give
the same weights (every random draw comes from one NumPy generator seeded by ``--seed``, and
each hand is dealt from a seed derived from it).

Each decision samples a card from ``softmax(features @ weights)``; a pass samples its cards
one at a time (the environment's passing is one card per step). After each hand, every
decision's log-probability gradient is weighted by what the seat was charged from that
decision on (reward to go), less a running baseline per decision kind and cards in hand.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # the SDK, when run from a checkout
sys.path.insert(0, str(HERE))

from bot import (  # noqa: E402
    PASS_FEATURES,
    PLAY_FEATURES,
    pass_features,
    play_features,
)

from bots_sdk import Bot  # noqa: E402
from bots_sdk.learning import SeatEnv, action_of  # noqa: E402

#: The tables the learner plays at, in turn: its seat and the bots in the other seats.
TABLES: list[tuple[int, list[str]]] = [
    (0, ["random", "random", "random"]),
    (1, ["low", "low", "low"]),
    (2, ["heuristic", "random", "low"]),
    (3, ["heuristic", "heuristic", "heuristic"]),
]
BATCH = 16  # hands per update
LEARNING_RATE = 0.03
POINT_SCALE = 13.0  # returns are divided by this (the queen of spades is 1.0)


class Adam:
    """The Adam optimiser (Kingma & Ba, 2015) for one weight vector, ascending."""

    def __init__(self, size: int, rate: float) -> None:
        self.rate, self.step = rate, 0
        self.m, self.v = np.zeros(size), np.zeros(size)

    def update(self, weights: np.ndarray, gradient: np.ndarray) -> None:
        self.step += 1
        self.m = 0.9 * self.m + 0.1 * gradient
        self.v = 0.999 * self.v + 0.001 * gradient * gradient
        m_hat = self.m / (1 - 0.9**self.step)
        v_hat = self.v / (1 - 0.999**self.step)
        weights += self.rate * m_hat / (np.sqrt(v_hat) + 1e-8)


def softmax(scores: np.ndarray) -> np.ndarray:
    exp = np.exp(scores - scores.max())
    return exp / exp.sum()


def play_hand(
    env: SeatEnv, seed: int, weights: dict[str, np.ndarray], rng: np.random.Generator
) -> tuple[list[tuple[str, int, np.ndarray]], list[float]]:
    """One hand: the learner's sampled decisions (kind, cards in hand, gradient of the
    log-probability) and the reward after each."""
    defaults = Bot()  # trump and moon: the SDK's default choices
    env.reset(seed=seed)
    steps: list[tuple[str, int, np.ndarray]] = []
    rewards: list[float] = []
    done = False
    while not done:
        view = env.view()
        if view.decision in ("play", "pass"):
            kind = view.decision
            rows = play_features(view) if kind == "play" else pass_features(view, view.legal)
            probabilities = softmax(rows @ weights[kind])
            choice = int(rng.choice(len(probabilities), p=probabilities))
            steps.append((kind, len(view.hand), rows[choice] - probabilities @ rows))
            text = view.legal[choice]
        elif view.decision == "trump":
            text = defaults.declare_trump(view)
        else:
            text = defaults.choose_moon(view)
        _, reward, done, _, _ = env.step(action_of(text))
        if view.decision in ("play", "pass"):
            rewards.append(float(reward))
        elif rewards:
            rewards[-1] += float(reward)
    return steps, rewards


def train(
    hands: int, seed: int, rules: str = "standard", report: int = 1000
) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    envs = [SeatEnv(rules, opponents=bots, seat=seat) for seat, bots in TABLES]
    weights = {"play": np.zeros(PLAY_FEATURES), "pass": np.zeros(PASS_FEATURES)}
    optimisers = {kind: Adam(len(w), LEARNING_RATE) for kind, w in weights.items()}
    baseline: dict[tuple[str, int], float] = {}
    gradients = {kind: np.zeros_like(w) for kind, w in weights.items()}
    charged: list[float] = []
    started = time.monotonic()
    for hand in range(hands):
        env = envs[hand % len(envs)]
        hand_seed = int(rng.integers(2**62))
        steps, rewards = play_hand(env, hand_seed, weights, rng)
        to_go = np.cumsum(rewards[::-1])[::-1] / POINT_SCALE
        for (kind, held, gradient), value in zip(steps, to_go):
            key = (kind, held)
            advantage = value - baseline.get(key, value)
            baseline[key] = baseline.get(key, value) + 0.01 * (value - baseline.get(key, value))
            gradients[kind] += advantage * gradient
        charged.append(-sum(rewards))
        if (hand + 1) % BATCH == 0:
            for kind in weights:
                optimisers[kind].update(weights[kind], gradients[kind] / BATCH)
                gradients[kind][:] = 0
        if report and (hand + 1) % report == 0:
            recent = charged[-report:]
            print(
                f"{hand + 1:6} hands  {np.mean(recent):6.2f} points/hand  "
                f"{time.monotonic() - started:6.1f} s",
                flush=True,
            )
    return weights


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=30000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=HERE / "weights.npz")
    args = parser.parse_args()
    weights = train(args.hands, args.seed)
    np.savez(args.out, play=weights["play"], **{"pass": weights["pass"]})
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
