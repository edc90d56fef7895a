'use strict';
// Your strategy goes here. This one plays exactly like the referee's built-in `low` bot:
// pass the highest cards, play the lowest legal card.
const { run, log, compareCards, lowest } = require('./bidel');

class MyBot {
  constructor() {
    this.name = 'low';
  }

  /** Optional: once, at `hello`. game = {seat, seed, settings} (seed it your RNG). */
  start(game) {
    log(`seat ${game.seat}, ${game.settings.players} players`);
  }

  /** The `count` cards to give away, from view.hand. */
  pass(view, count) {
    return view.hand.slice().sort(compareCards).reverse().slice(0, count);
  }

  /** The card to play: one of view.legal. */
  play(view) {
    return lowest(view.legal);
  }

  /** Hokm, as the hakem: the trump suit ("C", "D", "H" or "S"): the suit held most of
   * (ties go to the later letter). */
  trump(view) {
    let best = null;
    let most = -1;
    for (const suit of 'CDHS') {
      const n = view.hand.filter((card) => card[1] === suit).length;
      if (n >= most) [best, most] = [suit, n];
    }
    return best;
  }

  /** After shooting the moon (moon = "choice"): "add" (the others get the points) or
   * "subtract" (this bot loses them), whichever leaves it furthest ahead of the best other. */
  moon(view) {
    const amount = view.settings.moonAmount;
    const mine = view.totals[view.seat];
    const others = view.totals.filter((_, seat) => seat !== view.seat);
    const addMargin = Math.min(...others) + amount - mine;
    const subtractMargin = Math.min(...others) - (mine - amount);
    return addMargin > subtractMargin ? 'add' : 'subtract';
  }

  /** Optional: a hand is over (view.scores holds what it added). */
  handEnd(view) {}

  /** Optional: the game is over. */
  gameEnd(view) {}
}

run(new MyBot());
