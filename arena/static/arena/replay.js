// The match replay viewer, and the table of a person's game: draws frames computed on the
// server by the engine (no rule here). Steps of a hand: [the deal with the cards passed], after
// passing, then one card at a time.
// The table is drawn as one, seen from above: the seats around a felt in play order, clockwise
// or counter-clockwise as the rules say, so that the seat a pass "to the left" reaches is on the
// left whichever way the page's text runs; each trick's cards in front of their players, the
// completed trick going to its winner, the passes to the seats that receive them. Seat 0 sits at
// the bottom, or on a person's page (play.html) their own seat, where play.js puts their hand.
// A running match is followed live over a WebSocket (data-live): each event brings the frame
// of the hand in progress; the viewer follows the newest move, a move at a time as at a table,
// until you step back, and "Live" takes it to the newest move again.
"use strict";
(function () {
  const root = document.getElementById("replay");
  if (!root) return;
  const data = JSON.parse(root.dataset.frames);
  const liveUrl = root.dataset.live || "";
  let following = Boolean(liveUrl);
  const names = JSON.parse(root.dataset.names);
  // On a person's page, their seat ("you": "you take it", not "you takes it"), drawn at the bottom.
  const play = document.getElementById("play");
  const mine = play ? Number(play.dataset.seat) : null;
  const bottom = mine === null ? 0 : mine;
  const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
  // Words in the page's language (Django's JavaScript catalog, loaded before this file).
  const fmt = (format, values) => interpolate(format, values, true);
  const persian = document.documentElement.lang.startsWith("fa");
  const num = (n) => (persian ? String(n).replace(/[0-9]/g, (d) => "۰۱۲۳۴۵۶۷۸۹"[d]) : String(n));
  // The frames number seats, hands and tricks from 0 (the record's indexes); people count from 1.
  const nth = (index) => num(index + 1);
  const list = (items) => items.map(num).join(gettext(", "));
  const rtl = document.documentElement.dir === "rtl";
  const isolate = (text) => (rtl ? "\u2066" + text + "\u2069" : text);  // cards, left to right
  const SUIT_NAMES = { C: gettext("clubs"), D: gettext("diamonds"), H: gettext("hearts"), S: gettext("spades") };
  const RANK_NAMES = { T: "10", J: gettext("jack"), Q: gettext("queen"), K: gettext("king"), A: gettext("ace") };
  const DIRECTIONS = { left: gettext("left"), right: gettext("right"), across: gettext("across"), hold: gettext("hold") };
  const NOTES = { passed: gettext("passed"), received: gettext("received") };
  const FAULTS = { timeout: gettext("timeout"), crash: gettext("crash"), illegal: gettext("illegal"), protocol: gettext("protocol"), memory: gettext("memory") };
  const order = "23456789TJQKA";
  // Cards move unless the reader asked for no motion: then the same end, at once.
  const stillness = window.matchMedia ? window.matchMedia("(prefers-reduced-motion: reduce)") : { matches: false };
  // How long a followed live move stays before the next is shown (ms): a card, a completed
  // trick, a hand's end. A page further behind than CATCH_UP steps jumps to the newest.
  const PACE = { card: 400, trick: 1100, hand: 2200 };
  const CATCH_UP = 8;
  let hand = 0, step = 0, timer = null, pacer = null;
  let drawn = null;  // what the last render showed: where, and the trick on the table
  // What a person's page (play.js) adds to the table: the pass they are choosing or sent.
  const extras = { passing: null, passed: null };

  const handSelect = document.getElementById("hand-number");
  function handOptions() {
    data.hands.forEach((h, i) => {
      let option = handSelect.options[i];
      if (!option) { option = document.createElement("option"); option.value = i; handSelect.appendChild(option); }
      option.textContent = nth(i) + (h.void ? gettext(" (void)") : "");
    });
  }
  handOptions();

  function plays(h) { return h.tricks.flatMap((t) => t.plays); }
  function passStep(h) { return h.passes ? 1 : 0; }  // steps before the first card is played
  function lastStep(h) { return passStep(h) + plays(h).length; }
  function face(text) { return text[0].replace("T", "10") + SUITS[text[1]]; }
  function spoken(text) { return fmt(gettext("%(rank)s of %(suit)s"), { rank: RANK_NAMES[text[0]] || text[0], suit: SUIT_NAMES[text[1]] }); }
  function card(text, note) {
    const span = document.createElement("span");
    span.className = "card" + ("HD".includes(text[1]) ? " red" : "") + (note ? " " + note : "");
    span.textContent = face(text);
    span.dir = "ltr";  // "A♦" reads the same on a right-to-left page
    span.dataset.card = text;
    span.setAttribute("role", "img");
    span.setAttribute("aria-label", note ? `${spoken(text)} (${NOTES[note]})` : spoken(text));
    return span;
  }
  function sortCards(cards) {
    return cards.slice().sort((a, b) => "CDHS".indexOf(a[1]) - "CDHS".indexOf(b[1]) || order.indexOf(a[0]) - order.indexOf(b[0]));
  }
  function element(tag, className, text) {
    const made = document.createElement(tag);
    made.className = className;
    if (text !== undefined) made.textContent = text;
    return made;
  }

  function backs(count) {
    const span = element("span", "backs");
    for (let i = 0; i < count; i++) span.appendChild(document.createElement("i"));
    span.setAttribute("role", "img");
    span.setAttribute("aria-label", fmt(gettext("%(count)s cards in hand"), { count: num(count) }));
    return span;
  }

  // Passed cards on their way, shown small in the seat that receives them (the passer's note
  // says it in words: this is for the eyes only).
  function pile(from, cards) {
    const box = element("div", "incoming");
    box.dataset.from = from;
    box.setAttribute("aria-hidden", "true");
    cards.forEach((c) => {
      const small = card(c);
      small.classList.add("mini");
      small.removeAttribute("role");
      small.removeAttribute("aria-label");
      box.appendChild(small);
    });
    return box;
  }

  // --- the table's shape ------------------------------------------------------------------
  // Where each seat sits, on a grid of twelve columns that reads left to right whatever the
  // page's direction: the bottom seat spans it; the others go round in play order up the left
  // side, along the far edge and down the right side when play goes clockwise (seen from
  // above, the next player is on your left: a pass "left" goes to the next seat), the mirror of
  // that when it goes counter-clockwise. x, y: the way from the middle towards the seat.
  function seating(players, counterclockwise) {
    const others = players - 1;
    const side = Math.max(1, Math.floor((others + 1) / 3));  // seats up each side
    const far = Math.max(0, others - 2 * side);  // seats along the far edge (none for three)
    const first = far > 0 ? 2 : 1;  // the first row beside the middle
    const places = new Array(players);
    for (let k = 0; k < players; k++) {
      let row, from, to, where;
      if (k === 0) { row = first + side; from = 1; to = 13; where = "bottom"; }
      else if (k <= side) { row = first + side - k; from = 1; to = 4; where = "left"; }
      else if (k <= side + far) { const width = 12 / far; row = 1; from = 1 + (k - side - 1) * width; to = from + width; where = "top"; }
      else { row = first + (k - side - far - 1); from = 10; to = 13; where = "right"; }
      if (counterclockwise) {
        [from, to] = [14 - to, 14 - from];
        where = { left: "right", right: "left" }[where] || where;
      }
      const angle = Math.PI / 2 + ((counterclockwise ? -2 : 2) * Math.PI * k) / players;
      places[(bottom + k) % players] = { row, from, to, where, x: Math.cos(angle), y: Math.sin(angle) };
    }
    return { places, first, side };
  }

  let layout = null;  // the seat boxes, the middle and the layer cards fly in, once per shape
  function build() {
    const key = `${data.players}/${data.direction}`;
    if (layout && layout.key === key) return layout;
    const table = document.getElementById("table");
    const keep = document.getElementById("my-seat");  // a person's hand (play.html)
    table.textContent = "";
    const shape = seating(data.players, data.direction === "counterclockwise");
    const boxes = shape.places.map((place, seat) => {
      const box = element("div", "seat");
      box.dataset.seat = seat;
      box.dataset.side = place.where;
      box.style.gridColumn = `${place.from} / ${place.to}`;
      box.style.gridRow = String(place.row);
      table.appendChild(box);
      return box;
    });
    const centre = element("div", "trick");
    centre.setAttribute("role", "group");
    centre.setAttribute("aria-label", gettext("Cards on the table"));
    centre.style.gridColumn = "4 / 10";
    centre.style.gridRow = `${shape.first} / span ${shape.side}`;
    table.appendChild(centre);
    const flight = element("div", "flight");
    flight.setAttribute("aria-hidden", "true");
    table.appendChild(flight);
    if (keep && mine !== null && boxes[mine]) {
      keep.classList.add("keep");
      boxes[mine].classList.add("mine");
      boxes[mine].appendChild(keep);
    }
    layout = { key, table, boxes, centre, flight, places: shape.places };
    return layout;
  }

  // --- what one step shows ------------------------------------------------------------------
  function scene() {
    const zeros = new Array(data.players).fill(0);
    hand = Math.max(0, Math.min(hand, data.hands.length - 1));
    const h = data.hands[hand] || null;
    if (!h) return { h, played: 0, shown: [], all: [], inTrick: [], trick: null, trickIndex: -1, complete: false, passing: false, taken: zeros, totals: null, end: false };
    const all = plays(h);
    step = Math.max(0, Math.min(step, lastStep(h)));
    const passing = Boolean(h.passes) && step === 0;
    const played = Math.max(0, step - passStep(h));
    const shown = all.slice(0, played);
    const trickIndex = played === 0 ? -1 : Math.floor((played - 1) / data.players);
    const inTrick = played === 0 ? [] : shown.slice(trickIndex * data.players, played);
    const trick = trickIndex >= 0 ? h.tricks[trickIndex] : null;
    const complete = Boolean(trick && !trick.open && inTrick.length === trick.plays.length);
    const taken = trickIndex > 0 || complete ? h.tricks[complete ? trickIndex : trickIndex - 1].taken : zeros;
    const end = step === lastStep(h) && h.over !== false;
    return { h, played, shown, all, inTrick, trick, trickIndex, complete, passing, taken, totals: totalsAt(h, end), end };
  }

  // The game's totals beside each seat: before this hand, and with it once it is over.
  function totalsAt(h, end) {
    if (h.totals && h.scores) return end ? h.totals : h.totals.map((t, s) => t - h.scores[s]);
    if (h.totals_before) return h.totals_before;
    const previous = data.hands[hand - 1];
    if (previous) return previous.totals || null;
    return new Array(data.players).fill(0);
  }

  // A person's pass (play.js) shows at its hand's steps before the first card; before that
  // hand's first frame has come, on the newest hand's end.
  function personal(note, now) {
    const h = now.h;
    if (!note) return false;
    if (h && h.number === note.number) return now.played === 0;
    return hand >= data.hands.length - 1 && (!h || (h.number < note.number && now.end));
  }

  function drawSeat(lay, seat, now) {
    const box = lay.boxes[seat];
    const { h, played, complete, trick } = now;
    [...box.children].forEach((child) => { if (!child.classList.contains("keep")) child.remove(); });
    const wins = Boolean(complete && trick.winner === seat);
    box.classList.toggle("winner", wins);
    box.classList.remove("pass-target");
    const title = document.createElement("h3");
    title.textContent = fmt(gettext("%(name)s · seat %(seat)s · "), { name: names[seat], seat: nth(seat) });
    title.appendChild(element("span", "points", fmt(gettext("%(points)s points"), { points: num(now.taken[seat]) })));
    if (now.totals) title.appendChild(element("span", "total", fmt(gettext(" · total %(points)s"), { points: num(now.totals[seat]) })));
    if (wins) title.append(gettext(" · takes the trick"));
    box.prepend(title);
    if (h && !(play && seat === mine)) {  // (a person's own cards are play.js's buttons)
      const cards = element("div", "cards");
      if (h.hidden) {  // a game with a person at the table: a bystander sees no unplayed card
        const later = now.all.slice(played).filter(([s]) => s === seat).length;
        cards.appendChild(backs(h.held[seat] + later));
      } else if (now.passing) {
        const given = h.passes[seat] || [];
        sortCards(h.dealt[seat]).forEach((c) => cards.appendChild(card(c, given.includes(c) ? "passed" : "")));
      } else {
        const remaining = h.hands[seat].slice();
        now.shown.forEach(([s, c]) => { if (s === seat) remaining.splice(remaining.indexOf(c), 1); });
        const received = played === 0 && h.received ? h.received[seat] : [];
        sortCards(remaining).forEach((c) => cards.appendChild(card(c, received.includes(c) ? "received" : "")));
      }
      box.appendChild(cards);
    }
    if (now.passing) {
      box.appendChild(element("p", "pass-note", fmt(gettext("passes %(cards)s to %(name)s"), { cards: isolate((h.passes[seat] || []).map(face).join(" ")), name: names[h.pass_to[seat]] })));
    }
    const faults = (data.faults && data.faults[seat]) || [];
    if (faults.length) {
      box.appendChild(element("p", "fault", "⚠ " + fmt(gettext("%(count)s fault(s): "), { count: num(faults.length) }) + faults.map((x) => fmt(gettext("%(kind)s in hand %(hand)s"), { kind: FAULTS[x.class] || x.class, hand: nth(x.hand) })).join("; ")));
    }
  }

  // The passes on the table: each passer's cards in the seat they go to; a person's own pass.
  function drawPasses(lay, now) {
    if (now.passing) {
      now.h.passes.forEach((cards, from) => {
        if (cards && cards.length) lay.boxes[now.h.pass_to[from]].appendChild(pile(from, sortCards(cards)));
      });
    }
    if (personal(extras.passing, now) && lay.boxes[extras.passing.to]) {
      const box = lay.boxes[extras.passing.to];
      box.classList.add("pass-target");
      box.appendChild(element("p", "pass-note", gettext("gets the cards you pass")));
    } else if (personal(extras.passed, now) && lay.boxes[extras.passed.to]) {
      const box = lay.boxes[extras.passed.to];
      const cards = sortCards(extras.passed.cards);
      box.classList.add("pass-target");
      box.appendChild(element("p", "pass-note", fmt(gettext("gets %(cards)s from you"), { cards: isolate(cards.map(face).join(" ")) })));
      box.appendChild(pile(mine, cards));
    }
  }

  function drawTrick(lay, now) {
    const centre = lay.centre;
    centre.textContent = "";
    centre.classList.remove("taken");
    delete centre.dataset.winner;
    now.inTrick.forEach(([s, c]) => {
      const place = lay.places[s];
      const item = card(c);
      item.title = names[s];
      const slot = element("span", "played");
      slot.dataset.seat = s;
      slot.style.left = `${50 + 34 * place.x}%`;  // in front of its player
      slot.style.top = `${50 + 27 * place.y}%`;
      slot.append(item, element("small", "who", names[s]));
      centre.appendChild(slot);
    });
  }

  // --- motion ---------------------------------------------------------------------------------
  const middle = (r) => [r.left + r.width / 2, r.top + r.height / 2];
  // `moved` was drawn where it ends: it comes from `from` (a rectangle on the screen).
  function arrive(moved, from, delay) {
    const [fx, fy] = middle(from), [tx, ty] = middle(moved.getBoundingClientRect());
    moved.style.setProperty("--from-x", `${fx - tx}px`);
    moved.style.setProperty("--from-y", `${fy - ty}px`);
    if (delay) moved.style.transitionDelay = `${delay}ms`;
    moved.classList.add("arriving");
  }
  function launch(lay) {  // the arriving cards set off together
    const going = lay.table.querySelectorAll(".arriving");
    if (!going.length) return;
    void lay.table.offsetWidth;
    going.forEach((moved) => moved.classList.remove("arriving"));
  }
  // The completed trick leans towards its winner: each card part of the way to the winner's
  // own, and all of them towards the winner's seat (--tx, --ty).
  function aim(lay, winner) {
    const slots = [...lay.centre.querySelectorAll(".played")];
    const own = slots.find((slot) => Number(slot.dataset.seat) === winner);
    const [sx, sy] = middle(lay.boxes[winner].getBoundingClientRect());
    const [cx, cy] = middle(lay.centre.getBoundingClientRect());
    const length = Math.hypot(sx - cx, sy - cy) || 1;
    const [wx, wy] = own ? middle(own.getBoundingClientRect()) : [cx, cy];
    slots.forEach((slot) => {
      const [px, py] = middle(slot.getBoundingClientRect());
      slot.style.setProperty("--tx", `${(wx - px) * 0.25 + ((sx - cx) / length) * 10}px`);
      slot.style.setProperty("--ty", `${(wy - py) * 0.25 + ((sy - cy) / length) * 10}px`);
    });
  }
  // The trick taken on the step before goes into its winner's seat (copies fly; the table
  // itself already shows the next step).
  function sweep(lay, winner) {
    const cards = [...lay.centre.querySelectorAll(".played .card")];
    if (!cards.length) return;
    const origin = lay.table.getBoundingClientRect();
    const goal = winner === null || winner === undefined || !lay.boxes[winner] ? null : middle(lay.boxes[winner].getBoundingClientRect());
    const ghosts = cards.map((c) => {
      const r = c.getBoundingClientRect();
      const ghost = c.cloneNode(true);
      ["role", "aria-label", "title"].forEach((name) => ghost.removeAttribute(name));
      ghost.classList.add("ghost");
      Object.assign(ghost.style, { left: `${r.left - origin.left}px`, top: `${r.top - origin.top}px`, width: `${r.width}px`, height: `${r.height}px` });
      const [gx, gy] = middle(r);
      ghost.style.setProperty("--to-x", `${goal ? goal[0] - gx : 0}px`);
      ghost.style.setProperty("--to-y", `${goal ? goal[1] - gy : 0}px`);
      lay.flight.appendChild(ghost);
      return ghost;
    });
    void lay.flight.offsetWidth;
    ghosts.forEach((ghost) => {
      ["transitionend", "transitioncancel"].forEach((type) => ghost.addEventListener(type, () => ghost.remove()));
      ghost.classList.add("gone");
    });
    window.setTimeout(() => ghosts.forEach((ghost) => ghost.remove()), 2000);  // (a tab in the background)
  }

  // --- drawing a step -------------------------------------------------------------------------
  function render() {
    const lay = build();
    const before = drawn;
    const now = scene();
    const { h, played, inTrick, trick, complete } = now;
    const moving = !stillness.matches;
    const here = before && before.key === lay.key && before.hand === hand;
    const forward = Boolean(here && step === before.step + 1 && before.h);
    const same = Boolean(here && step === before.step);
    // Where the card just played comes from: its place in the hand, or its player's seat.
    let source = null;
    if (moving && forward && played === before.played + 1 && inTrick.length) {
      const [who, c] = inTrick[inTrick.length - 1];
      const box = lay.boxes[who];
      const from = box.querySelector(`.cards .card[data-card="${c}"]`) || box.querySelector(".cards, .hand") || box;
      source = from.getBoundingClientRect();
    }
    if (moving && forward && before.complete && now.trickIndex !== before.trickIndex) sweep(lay, before.winner);
    for (let seat = 0; seat < data.players; seat++) drawSeat(lay, seat, now);
    drawPasses(lay, now);
    drawTrick(lay, now);
    // The motion: the card just played, the passes (each time their step is drawn anew), a
    // person's own pass, then the trick leaning towards its winner.
    if (moving && source) arrive(lay.centre.querySelector(".played:last-of-type .card"), source);
    if (moving && now.passing && !same) {
      now.h.passes.forEach((cards, from) => {
        lay.table.querySelectorAll(`.incoming[data-from="${from}"] .card`).forEach((moved) => {
          const origin = lay.boxes[from].querySelector(`.cards .card[data-card="${moved.dataset.card}"]`);
          if (origin) arrive(moved, origin.getBoundingClientRect(), 150 * ((from - bottom + data.players) % data.players));
        });
      });
    }
    if (extras.passed && extras.passed.from) {
      const from = extras.passed.from;
      delete extras.passed.from;
      if (moving) {
        lay.table.querySelectorAll(`.incoming[data-from="${mine}"] .card`).forEach((moved) => {
          if (from[moved.dataset.card]) arrive(moved, from[moved.dataset.card]);
        });
      }
    }
    launch(lay);
    if (complete && trick.winner !== null && trick.winner !== undefined) {
      aim(lay, trick.winner);
      lay.centre.dataset.winner = trick.winner;
      if (!(moving && forward)) lay.table.classList.add("instant");  // there already
      void lay.centre.offsetWidth;
      lay.centre.classList.add("taken");
      void lay.centre.offsetWidth;
      lay.table.classList.remove("instant");
    }

    const status = document.getElementById("status");
    let text;
    if (personal(extras.passing, now)) {
      const index = h && h.number === extras.passing.number ? hand : data.hands.length;
      text = fmt(gettext("Hand %(hand)s, "), { hand: nth(index) }) + fmt(gettext("passing %(direction)s"), { direction: DIRECTIONS[extras.passing.direction] || extras.passing.direction });
    } else if (!h) {
      text = gettext("Waiting for the first deal…");
    } else {
      const direction = DIRECTIONS[h.pass_direction] || h.pass_direction;
      text = fmt(gettext("Hand %(hand)s, "), { hand: nth(hand) });
      if (now.passing) text += fmt(gettext("passing %(direction)s"), { direction });
      else if (played === 0 && (h.passes || h.pass_to)) text += fmt(gettext("after passing %(direction)s"), { direction });
      else if (played === 0 && h.hidden && h.pass_direction !== "hold") text += gettext("the cards are dealt");  // (a bystander sees no pass)
      else if (played === 0) text += gettext("no passing");
      else text += fmt(gettext("trick %(trick)s, card %(card)s of %(players)s"), { trick: nth(now.trickIndex), card: num(inTrick.length), players: num(data.players) });
      if (complete && trick.winner !== null && trick.winner === mine) text += gettext(" — you take it");
      else if (complete && trick.winner !== null) text += fmt(gettext(" — %(name)s takes it"), { name: names[trick.winner] });
      if (complete && trick.winner === null) text += gettext(" — every card cancelled: nobody takes it");
      if (now.end) {
        text += fmt(gettext(". Scores %(scores)s; totals %(totals)s"), { scores: list(h.scores), totals: list(h.totals) });
        if (h.shooter !== null && h.shooter === mine) text += gettext(" — you shot the moon!");
        else if (h.shooter !== null) text += fmt(gettext(" — %(name)s shot the moon!"), { name: names[h.shooter] });
      }
    }
    if (h && h.trump) text += " " + fmt(gettext("Trumps: %(suit)s."), { suit: `${SUITS[h.trump]} ${SUIT_NAMES[h.trump] || h.trump}` });
    if (liveUrl) text += following ? gettext(" · live") : "";
    status.textContent = text;
    status.classList.toggle("moon", Boolean(h && now.end && h.shooter !== null));
    const share = document.getElementById("share");
    if (share) share.href = `#h${hand + 1}s${step}`;
    handSelect.value = hand;
    drawn = { key: lay.key, h, hand, step, played, trickIndex: now.trickIndex, complete, winner: complete ? trick.winner : null, end: now.end };
    // For the scripts beside this one (analysis.js): where the replay stands.
    root.dispatchEvent(new CustomEvent("bidel:step", { detail: { hand, step, played } }));
  }

  function go(delta) {
    if (delta < 0) stopFollowing();
    if (!data.hands.length) return;
    step += delta;
    if (step > lastStep(data.hands[hand]) && hand < data.hands.length - 1) { hand += 1; step = 0; }
    if (step < 0 && hand > 0) { hand -= 1; step = lastStep(data.hands[hand]); }
    render();
  }
  function toggle() {
    const button = document.getElementById("play-replay");
    if (timer) { clearInterval(timer); timer = null; button.textContent = "▶ " + gettext("Play"); button.setAttribute("aria-label", gettext("Play")); return; }
    timer = setInterval(() => go(1), 700);
    button.textContent = "⏸ " + gettext("Pause"); button.setAttribute("aria-label", gettext("Pause"));
  }
  function goto(toHand, toStep) {
    stopFollowing();
    hand = Number(toHand);
    step = Number(toStep);
    render();
  }
  document.getElementById("next").addEventListener("click", () => go(1));
  document.getElementById("prev").addEventListener("click", () => go(-1));
  document.getElementById("first").addEventListener("click", () => goto(0, 0));
  document.getElementById("play-replay").addEventListener("click", toggle);
  handSelect.addEventListener("change", () => goto(handSelect.value, 0));
  document.addEventListener("keydown", (event) => {
    const tag = event.target.tagName;
    if (event.target.closest && event.target.closest(".my-seat")) return;  // a person's own cards
    if (tag === "SELECT" || tag === "INPUT" || tag === "TEXTAREA" || event.altKey || event.ctrlKey || event.metaKey) return;
    // The arrow pointing the way the page reads steps forward: → in English, ← in Persian.
    if (event.key === "ArrowRight") { go(rtl ? -1 : 1); event.preventDefault(); }
    if (event.key === "ArrowLeft") { go(rtl ? 1 : -1); event.preventDefault(); }
    if (event.key === " " && tag !== "BUTTON" && tag !== "A") { toggle(); event.preventDefault(); }
    if (event.key === "Home") { goto(0, 0); event.preventDefault(); }
  });
  function fromHash() {
    const match = /^#h(\d+)s(\d+)$/.exec(window.location.hash);
    if (!match) return false;
    hand = Math.max(0, Math.min(Number(match[1]) - 1, data.hands.length - 1));
    step = Number(match[2]);
    return true;
  }
  window.addEventListener("hashchange", () => { if (fromHash()) { stopFollowing(); render(); } });
  if (fromHash()) following = false;
  let resizing = false;  // a new width moves the seats: the step drawn again where they are
  window.addEventListener("resize", () => {
    if (resizing) return;
    resizing = true;
    window.requestAnimationFrame(() => { resizing = false; render(); });
  });
  // For the scripts beside this one: analysis.js takes the replay to a play; play.js tells the
  // table about the person's pass.
  window.bidelReplay = { goto, position: () => ({ hand, step, played: drawn ? drawn.played : 0 }) };
  window.bidelTable = { set(values) { Object.assign(extras, values); render(); } };

  // --- live ------------------------------------------------------------------------------
  const liveButton = document.getElementById("live");
  function stopFollowing() {
    window.clearTimeout(pacer);
    pacer = null;
    if (!following) return;
    following = false;
    if (liveButton) liveButton.setAttribute("aria-pressed", "false");
  }
  function newest() {
    hand = Math.max(0, data.hands.length - 1);
    step = data.hands.length ? lastStep(data.hands[hand]) : 0;
  }
  function followNewest() {
    window.clearTimeout(pacer);
    pacer = null;
    following = true;
    if (liveButton) liveButton.setAttribute("aria-pressed", "true");
    newest();
    render();
  }
  // Following: the next move is shown once the one drawn has stayed its time.
  function chase() {
    pacer = null;
    if (!following) return;
    const last = data.hands.length - 1;
    if (last < 0) { render(); return; }
    const end = lastStep(data.hands[last]);
    let behind = Infinity;
    if (hand === last && step <= end) behind = end - step;
    else if (hand === last - 1) behind = lastStep(data.hands[hand]) - step + 1 + end;
    if (!drawn || !drawn.h || behind > CATCH_UP) { newest(); render(); return; }
    if (behind === 0) { render(); return; }
    if (step < lastStep(data.hands[hand])) step += 1;
    else { hand += 1; step = 0; }
    render();
    pacer = window.setTimeout(chase, drawn.end ? PACE.hand : drawn.complete ? PACE.trick : PACE.card);
  }
  // What arrived, and when (seconds, the page's clock): read by the live tests and benchmark.
  const received = (window.bidelLive = { events: [], ended: false, seq: -1, data });
  function onEvent(event) {
    if (event.type === "hello") { received.connected = true; return; }
    received.events.push({ seq: event.seq, type: event.type, at: event.at, seen: Date.now() / 1000 });
    if (event.type === "table") { data.players = event.players; data.direction = event.direction; }
    if (event.type === "frame") {
      if (event.hand < data.hands.length - 1 || event.hand > data.hands.length) return;
      data.hands[event.hand] = event.frame;
      handOptions();
      if (!following) render();
      else if (!pacer) chase();
    }
    if (event.type === "cut") {
      // The feed reached its size limit (hearts_runner.live.LIVE_MAX_BYTES): nothing more comes
      // but the match's end; its replay is stored as always.
      received.cut = true;
      const cut = document.getElementById("live-cut");
      if (cut) cut.hidden = false;
    }
    if (event.type === "end") {
      received.ended = true;
      if (following) newest();  // the last move, and the scores
      stopFollowing();
      render();
    }
    if (event.type === "stored" || event.type === "finished") {
      // The platform has stored the match: its replay (or, after a lost runner, its next try).
      received.ended = true;
      received.stored = true;
      if (following) newest();
      stopFollowing();
      render();  // the status no longer says "live"
      const done = document.getElementById("live-status");
      if (done) done.hidden = false;
    }
    received.seq = event.seq ?? received.seq;
  }
  function connect(delay) {
    const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    const socket = new WebSocket(scheme + window.location.host + liveUrl);
    socket.addEventListener("message", (message) => onEvent(JSON.parse(message.data)));
    socket.addEventListener("close", () => {
      if (!received.stored) window.setTimeout(() => connect(Math.min(delay * 2, 8000)), delay);
    });
  }
  if (liveUrl) {
    if (liveButton) liveButton.addEventListener("click", followNewest);
    connect(500);
  }
  render();
})();
