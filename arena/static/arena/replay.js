// The match replay viewer: draws frames computed on the server by the engine (no rule here).
// Steps of a hand: [the deal with the cards passed], after passing, then one card at a time.
// A running match is followed live over a WebSocket (data-live): each event brings the frame
// of the hand in progress; the viewer follows the newest move until you step back, and "Live"
// takes it to the newest move again.
"use strict";
(function () {
  const root = document.getElementById("replay");
  if (!root) return;
  const data = JSON.parse(root.dataset.frames);
  const liveUrl = root.dataset.live || "";
  let following = Boolean(liveUrl);
  const names = JSON.parse(root.dataset.names);
  // On a person's page, their seat ("you": "you take it", not "you takes it").
  const play = document.getElementById("play");
  const mine = play ? Number(play.dataset.seat) : null;
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
  let hand = 0, step = 0, timer = null;

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
  function card(text, note) {
    const span = document.createElement("span");
    span.className = "card" + ("HD".includes(text[1]) ? " red" : "") + (note ? " " + note : "");
    span.textContent = face(text);
    span.dir = "ltr";  // "A♦" reads the same on a right-to-left page
    span.dataset.card = text;
    const spoken = fmt(gettext("%(rank)s of %(suit)s"), { rank: RANK_NAMES[text[0]] || text[0], suit: SUIT_NAMES[text[1]] });
    span.setAttribute("role", "img");
    span.setAttribute("aria-label", note ? `${spoken} (${NOTES[note]})` : spoken);
    return span;
  }
  function sortCards(cards) {
    return cards.slice().sort((a, b) => "CDHS".indexOf(a[1]) - "CDHS".indexOf(b[1]) || order.indexOf(a[0]) - order.indexOf(b[0]));
  }

  function backs(count) {
    const span = document.createElement("span");
    span.className = "backs";
    for (let i = 0; i < count; i++) span.appendChild(document.createElement("i"));
    span.setAttribute("role", "img");
    span.setAttribute("aria-label", fmt(gettext("%(count)s cards in hand"), { count: num(count) }));
    return span;
  }

  function render() {
    const status = document.getElementById("status");
    if (!data.hands.length) { status.textContent = gettext("Waiting for the first deal…"); return; }
    hand = Math.max(0, Math.min(hand, data.hands.length - 1));
    const h = data.hands[hand];
    const all = plays(h);
    step = Math.max(0, Math.min(step, lastStep(h)));
    const passing = h.passes && step === 0;
    const played = Math.max(0, step - passStep(h));
    const shown = all.slice(0, played);
    const trickIndex = played === 0 ? -1 : Math.floor((played - 1) / data.players);
    const inTrick = played === 0 ? [] : shown.slice(trickIndex * data.players, played);
    const trick = trickIndex >= 0 ? h.tricks[trickIndex] : null;
    const complete = trick && !trick.open && inTrick.length === trick.plays.length;
    const taken = trickIndex > 0 || complete ? h.tricks[complete ? trickIndex : trickIndex - 1].taken : new Array(data.players).fill(0);
    const table = document.getElementById("table");
    table.innerHTML = "";
    table.classList.toggle("four", data.players === 4);  // seats around the table, seen from above
    table.classList.toggle("counterclockwise", data.direction === "counterclockwise");
    for (let seat = 0; seat < data.players; seat++) {
      const box = document.createElement("div");
      box.className = "seat";
      box.dataset.seat = seat;
      if (complete && trick.winner === seat) box.classList.add("winner");
      const title = document.createElement("h3");
      title.textContent = fmt(gettext("%(name)s · seat %(seat)s · "), { name: names[seat], seat: nth(seat) });
      const points = document.createElement("span");
      points.className = "points";
      points.textContent = fmt(gettext("%(points)s points"), { points: num(taken[seat]) });
      title.appendChild(points);
      if (complete && trick.winner === seat) title.append(gettext(" · takes the trick"));
      box.appendChild(title);
      const cards = document.createElement("div");
      cards.className = "cards";
      if (h.hidden) {  // a game with a person at the table: a bystander sees no unplayed card
        const later = all.slice(played).filter(([s]) => s === seat).length;
        cards.appendChild(backs(h.held[seat] + later));
      } else if (passing) {
        const given = h.passes[seat] || [];
        sortCards(h.dealt[seat]).forEach((c) => cards.appendChild(card(c, given.includes(c) ? "passed" : "")));
      } else {
        const remaining = h.hands[seat].slice();
        shown.forEach(([s, c]) => { if (s === seat) remaining.splice(remaining.indexOf(c), 1); });
        const received = played === 0 && h.received ? h.received[seat] : [];
        sortCards(remaining).forEach((c) => cards.appendChild(card(c, received.includes(c) ? "received" : "")));
      }
      box.appendChild(cards);
      if (passing) {
        const note = document.createElement("p");
        note.className = "pass-note";
        note.textContent = fmt(gettext("passes %(cards)s to %(name)s"), { cards: isolate((h.passes[seat] || []).map(face).join(" ")), name: names[h.pass_to[seat]] });
        box.appendChild(note);
      }
      const faults = (data.faults && data.faults[seat]) || [];
      if (faults.length) {
        const f = document.createElement("p");
        f.className = "fault";
        f.textContent = "⚠ " + fmt(gettext("%(count)s fault(s): "), { count: num(faults.length) }) + faults.map((x) => fmt(gettext("%(kind)s in hand %(hand)s"), { kind: FAULTS[x.class] || x.class, hand: nth(x.hand) })).join("; ");
        box.appendChild(f);
      }
      table.appendChild(box);
    }
    const centre = document.createElement("div");
    centre.className = "trick";
    centre.setAttribute("role", "group");
    centre.setAttribute("aria-label", gettext("Cards on the table"));
    inTrick.forEach(([s, c]) => {
      const item = card(c);
      item.title = names[s];
      const who = document.createElement("small");
      who.className = "who";
      who.textContent = names[s];
      const slot = document.createElement("span");
      slot.className = "played";
      slot.dataset.seat = s;
      slot.append(item, who);
      centre.appendChild(slot);
    });
    table.appendChild(centre);
    const direction = DIRECTIONS[h.pass_direction] || h.pass_direction;
    let text = fmt(gettext("Hand %(hand)s, "), { hand: nth(hand) });
    if (passing) text += fmt(gettext("passing %(direction)s"), { direction });
    else if (played === 0) text += h.passes ? fmt(gettext("after passing %(direction)s"), { direction }) : gettext("no passing");
    else text += fmt(gettext("trick %(trick)s, card %(card)s of %(players)s"), { trick: nth(trickIndex), card: num(inTrick.length), players: num(data.players) });
    if (complete && trick.winner !== null && trick.winner === mine) text += gettext(" — you take it");
    else if (complete && trick.winner !== null) text += fmt(gettext(" — %(name)s takes it"), { name: names[trick.winner] });
    if (complete && trick.winner === null) text += gettext(" — every card cancelled: nobody takes it");
    if (step === lastStep(h) && h.over !== false) {
      text += fmt(gettext(". Scores %(scores)s; totals %(totals)s"), { scores: list(h.scores), totals: list(h.totals) });
      if (h.shooter !== null && h.shooter === mine) text += gettext(" — you shot the moon!");
      else if (h.shooter !== null) text += fmt(gettext(" — %(name)s shot the moon!"), { name: names[h.shooter] });
    }
    if (liveUrl) text += following ? gettext(" · live") : "";
    status.textContent = text;
    status.classList.toggle("moon", step === lastStep(h) && h.shooter !== null);
    const share = document.getElementById("share");
    if (share) share.href = `#h${hand + 1}s${step}`;
    handSelect.value = hand;
  }

  function go(delta) {
    if (delta < 0) stopFollowing();
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
  document.getElementById("next").addEventListener("click", () => go(1));
  document.getElementById("prev").addEventListener("click", () => go(-1));
  document.getElementById("first").addEventListener("click", () => { stopFollowing(); hand = 0; step = 0; render(); });
  document.getElementById("play-replay").addEventListener("click", toggle);
  handSelect.addEventListener("change", () => { stopFollowing(); hand = Number(handSelect.value); step = 0; render(); });
  document.addEventListener("keydown", (event) => {
    const tag = event.target.tagName;
    if (event.target.closest && event.target.closest("#play")) return;  // a person's own cards
    if (tag === "SELECT" || tag === "INPUT" || tag === "TEXTAREA" || event.altKey || event.ctrlKey || event.metaKey) return;
    // The arrow pointing the way the page reads steps forward: → in English, ← in Persian.
    if (event.key === "ArrowRight") { go(rtl ? -1 : 1); event.preventDefault(); }
    if (event.key === "ArrowLeft") { go(rtl ? 1 : -1); event.preventDefault(); }
    if (event.key === " " && tag !== "BUTTON" && tag !== "A") { toggle(); event.preventDefault(); }
    if (event.key === "Home") { stopFollowing(); hand = 0; step = 0; render(); event.preventDefault(); }
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

  // --- live ------------------------------------------------------------------------------
  const liveButton = document.getElementById("live");
  function stopFollowing() {
    if (!following) return;
    following = false;
    if (liveButton) liveButton.setAttribute("aria-pressed", "false");
  }
  function followNewest() {
    following = true;
    if (liveButton) liveButton.setAttribute("aria-pressed", "true");
    hand = data.hands.length - 1;
    step = hand >= 0 ? lastStep(data.hands[hand]) : 0;
    render();
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
      if (following) { hand = event.hand; step = lastStep(event.frame); }
      render();
    }
    if (event.type === "cut") {
      // The feed reached its size limit (hearts_runner.live.LIVE_MAX_BYTES): nothing more comes
      // but the match's end; its replay is stored as always.
      received.cut = true;
      const cut = document.getElementById("live-cut");
      if (cut) cut.hidden = false;
    }
    if (event.type === "end") { received.ended = true; stopFollowing(); render(); }
    if (event.type === "stored" || event.type === "finished") {
      // The platform has stored the match: its replay (or, after a lost runner, its next try).
      received.ended = true;
      received.stored = true;
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
