'use strict';
// The Bidel protocol for a bot in JavaScript (Node's standard library only).
//
// The referee writes one JSON object per line on stdin; the bot answers `ready` to `hello` and
// `action` (with the same `id`) to every `act`, one line each on stdout, and nothing else.
// Logs go to stderr (use `log(...)` or console.error). You should not need to edit this file:
// write your strategy in bot.js and start it with `run(new MyBot())`.

const fs = require('fs');

const RANKS = '23456789TJQKA';
const SUITS = 'CDHS';

/** A card's rank strength: 0 for a two .. 12 for an ace. */
const strength = (card) => RANKS.indexOf(card[0]);
/** A card's suit index: clubs 0, diamonds 1, hearts 2, spades 3. */
const suitIndex = (card) => SUITS.indexOf(card[1]);
/** Orders cards by (strength, suit index), lowest first: `cards.slice().sort(compareCards)`. */
const compareCards = (a, b) => strength(a) - strength(b) || suitIndex(a) - suitIndex(b);
/** The lowest card by rank (clubs, diamonds, hearts, spades breaking ties). */
const lowest = (cards) => cards.reduce((best, c) => (compareCards(c, best) < 0 ? c : best));
/** The highest card by rank (spades, hearts, diamonds, clubs breaking ties). */
const highest = (cards) => cards.reduce((best, c) => (compareCards(c, best) > 0 ? c : best));

/** Writes to stderr (the referee keeps the first 64 KiB for the bot's owner). */
function log(...args) {
  console.error(...args);
}

const camel = (key) => key.replace(/_([a-z0-9])/g, (_, ch) => ch.toUpperCase());

/** The hello's resolved rules, keys in camelCase: players, passCount, handSize, deckSize,
 * moonAmount, hokm, preset, ... (`raw` holds the object as sent). */
class Settings {
  constructor(raw) {
    this.raw = raw && typeof raw === 'object' ? raw : {};
    for (const [key, value] of Object.entries(this.raw)) this[camel(key)] = value;
  }
}

/** What the bot sees. Nullable fields are null when absent. Cards are strings like "2C", "TD". */
class View {
  constructor(raw, game) {
    const v = raw && typeof raw === 'object' ? raw : {};
    const list = (x) => (Array.isArray(x) ? x : []);
    const orNull = (x) => (x === undefined ? null : x);
    this.seat = typeof v.seat === 'number' ? v.seat : game.seat;
    this.rules = orNull(v.rules); // a preset name (string) or a rules object
    this.hand = list(v.hand);
    this.legal = list(v.legal);
    this.decision = typeof v.decision === 'string' ? v.decision : 'none';
    this.trick = list(v.trick); // [[seat, card], ...] in play order
    this.tricks = list(v.tricks).map((t) => ({
      leader: orNull(t && t.leader),
      plays: list(t && t.plays),
      winner: orNull(t && t.winner), // null when Cancellation cancelled everything
    }));
    this.pointsTaken = list(v.points_taken);
    this.totals = list(v.totals);
    this.passDirection = orNull(v.pass_direction);
    this.passOffset = typeof v.pass_offset === 'number' ? v.pass_offset : 0;
    this.passed = list(v.passed);
    this.received = list(v.received);
    this.heartsBroken = v.hearts_broken === true;
    this.trump = orNull(v.trump);
    this.hakem = orNull(v.hakem);
    this.handNumber = typeof v.hand_number === 'number' ? v.hand_number : 0;
    this.cardsLeft = list(v.cards_left);
    this.kittySize = typeof v.kitty_size === 'number' ? v.kitty_size : 0;
    this.kittyTaker = orNull(v.kitty_taker);
    this.kitty = list(v.kitty);
    this.scores = orNull(v.scores);
    this.timeLeft = orNull(v.time_left); // seconds this move may take, or null
    this.leader = orNull(v.leader);
    // From `hello`:
    this.seed = game.seed;
    this.settings = game.settings;
    this.raw = v; // the view as sent, for keys this class does not know yet
  }
}

function writeLine(message) {
  const data = Buffer.from(JSON.stringify(message) + '\n', 'utf8');
  let offset = 0;
  while (offset < data.length) {
    try {
      offset += fs.writeSync(1, data, offset, data.length - offset);
    } catch (err) {
      if (err.code !== 'EAGAIN') throw err; // (a non-blocking pipe that is full: try again)
    }
  }
}

function crash(err) {
  const detail = String((err && err.stack) || err);
  log(detail);
  try {
    writeLine({ type: 'error', class: 'crash', detail: detail.slice(0, 500) });
  } finally {
    process.exit(1);
  }
}

/** Runs `bot` until `bye` or the end of input. The bot has `pass(view, count)`, `play(view)`
 * and, for the variants that ask, `trump(view)` and `moon(view)`; optional `name`,
 * `start(game)` (game: {seat, seed, settings}), `handEnd(view)` and `gameEnd(view)`. */
function run(bot) {
  const game = { seat: 0, seed: 0, settings: new Settings(null) };

  const decide = (decision, view, msg) => {
    switch (decision) {
      case 'pass': {
        const count = Number.isInteger(msg.count) ? msg.count : game.settings.passCount;
        return bot.pass(view, count);
      }
      case 'play':
        return bot.play(view);
      case 'trump':
        return bot.trump(view);
      case 'moon':
        return bot.moon(view);
      default:
        log(`unknown decision ${JSON.stringify(decision)}: answering the first legal action`);
        return view.legal[0];
    }
  };

  const handle = (line) => {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch (err) {
      log(`ignored a line that is not JSON: ${line.slice(0, 200)}`);
      return;
    }
    if (!msg || typeof msg !== 'object') return;
    switch (msg.type) {
      case 'hello':
        game.seat = msg.seat;
        game.seed = msg.seed;
        game.settings = new Settings(msg.settings);
        if (bot.start) bot.start(game);
        writeLine({ type: 'ready', name: String(bot.name || bot.constructor.name).slice(0, 64) });
        break;
      case 'act': {
        const view = new View(msg.view, game);
        const decision = typeof msg.decision === 'string' ? msg.decision : view.decision;
        const action = decide(decision, view, msg);
        if (action === undefined || action === null) throw new Error(`${decision}: the bot returned no action`);
        writeLine({ type: 'action', id: msg.id, action });
        break;
      }
      case 'hand_end':
        if (bot.handEnd) bot.handEnd(new View(msg.view, game));
        break;
      case 'game_end':
        if (bot.gameEnd) bot.gameEnd(new View(msg.view, game));
        break;
      case 'bye':
        process.exit(0);
        break;
      default: // a message this kit does not know: ignored
    }
  };

  process.on('uncaughtException', crash);
  let pending = Buffer.alloc(0);
  process.stdin.on('data', (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    let newline;
    while ((newline = pending.indexOf(10)) >= 0) {
      const line = pending.subarray(0, newline).toString('utf8');
      pending = pending.subarray(newline + 1);
      if (line.trim()) {
        try {
          handle(line);
        } catch (err) {
          crash(err);
        }
      }
    }
  });
  process.stdin.on('end', () => process.exit(0));
}

module.exports = { run, View, Settings, log, strength, suitIndex, compareCards, lowest, highest, RANKS, SUITS };
