// The match replay viewer: draws frames computed on the server by the engine (no rule here).
// Steps of a hand: [the deal with the cards passed], after passing, then one card at a time.
"use strict";
(function () {
  const root = document.getElementById("replay");
  if (!root) return;
  const data = JSON.parse(root.dataset.frames);
  const names = JSON.parse(root.dataset.names);
  const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
  const SUIT_NAMES = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
  const RANK_NAMES = { T: "10", J: "jack", Q: "queen", K: "king", A: "ace" };
  const order = "23456789TJQKA";
  let hand = 0, step = 0, timer = null;

  const handSelect = document.getElementById("hand");
  data.hands.forEach((h, i) => {
    const option = document.createElement("option");
    option.value = i; option.textContent = `${i + 1}${h.void ? " (void)" : ""}`;
    handSelect.appendChild(option);
  });

  function plays(h) { return h.tricks.flatMap((t) => t.plays); }
  function passStep(h) { return h.passes ? 1 : 0; }  // steps before the first card is played
  function lastStep(h) { return passStep(h) + plays(h).length; }
  function face(text) { return text[0].replace("T", "10") + SUITS[text[1]]; }
  function card(text, note) {
    const span = document.createElement("span");
    span.className = "card" + ("HD".includes(text[1]) ? " red" : "") + (note ? " " + note : "");
    span.textContent = face(text);
    span.dataset.card = text;
    const spoken = `${RANK_NAMES[text[0]] || text[0]} of ${SUIT_NAMES[text[1]]}`;
    span.setAttribute("role", "img");
    span.setAttribute("aria-label", note ? `${spoken} (${note})` : spoken);
    return span;
  }
  function sortCards(cards) {
    return cards.slice().sort((a, b) => "CDHS".indexOf(a[1]) - "CDHS".indexOf(b[1]) || order.indexOf(a[0]) - order.indexOf(b[0]));
  }

  function render() {
    const h = data.hands[hand];
    const all = plays(h);
    step = Math.max(0, Math.min(step, lastStep(h)));
    const passing = h.passes && step === 0;
    const played = Math.max(0, step - passStep(h));
    const shown = all.slice(0, played);
    const trickIndex = played === 0 ? -1 : Math.floor((played - 1) / data.players);
    const inTrick = played === 0 ? [] : shown.slice(trickIndex * data.players, played);
    const trick = trickIndex >= 0 ? h.tricks[trickIndex] : null;
    const complete = trick && inTrick.length === trick.plays.length;
    const taken = trickIndex > 0 || complete ? h.tricks[complete ? trickIndex : trickIndex - 1].taken : new Array(data.players).fill(0);
    const table = document.getElementById("table");
    table.innerHTML = "";
    table.classList.toggle("four", data.players === 4);  // seats around the table, seen from above
    for (let seat = 0; seat < data.players; seat++) {
      const box = document.createElement("div");
      box.className = "seat";
      box.dataset.seat = seat;
      if (complete && trick.winner === seat) box.classList.add("winner");
      const title = document.createElement("h3");
      title.textContent = `${names[seat]} · seat ${seat} · `;
      const points = document.createElement("span");
      points.className = "points";
      points.textContent = `${taken[seat]} points`;
      title.appendChild(points);
      if (complete && trick.winner === seat) title.append(" · takes the trick");
      box.appendChild(title);
      const cards = document.createElement("div");
      cards.className = "cards";
      if (passing) {
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
        note.textContent = `passes ${(h.passes[seat] || []).map(face).join(" ")} to ${names[h.pass_to[seat]]}`;
        box.appendChild(note);
      }
      const faults = (data.faults && data.faults[seat]) || [];
      if (faults.length) {
        const f = document.createElement("p");
        f.className = "fault";
        f.textContent = `⚠ ${faults.length} fault(s): ` + faults.map((x) => `${x.class} in hand ${x.hand}`).join("; ");
        box.appendChild(f);
      }
      table.appendChild(box);
    }
    const centre = document.createElement("div");
    centre.className = "trick";
    centre.setAttribute("role", "group");
    centre.setAttribute("aria-label", "Cards on the table");
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
    let text = `Hand ${hand + 1}, `;
    if (passing) text += `passing ${h.pass_direction}`;
    else if (played === 0) text += h.passes ? `after passing ${h.pass_direction}` : "no passing";
    else text += `trick ${trickIndex + 1}, card ${inTrick.length} of ${data.players}`;
    if (complete && trick.winner !== null) text += ` — ${names[trick.winner]} takes it`;
    if (complete && trick.winner === null) text += " — every card cancelled: nobody takes it";
    if (step === lastStep(h)) {
      text += `. Scores ${h.scores.join(", ")}; totals ${h.totals.join(", ")}`;
      if (h.shooter !== null) text += ` — ${names[h.shooter]} shot the moon!`;
    }
    const status = document.getElementById("status");
    status.textContent = text;
    status.classList.toggle("moon", step === lastStep(h) && h.shooter !== null);
    document.getElementById("share").href = `#h${hand + 1}s${step}`;
    handSelect.value = hand;
  }

  function go(delta) {
    step += delta;
    if (step > lastStep(data.hands[hand]) && hand < data.hands.length - 1) { hand += 1; step = 0; }
    if (step < 0 && hand > 0) { hand -= 1; step = lastStep(data.hands[hand]); }
    render();
  }
  function toggle() {
    const button = document.getElementById("play");
    if (timer) { clearInterval(timer); timer = null; button.textContent = "▶ Play"; button.setAttribute("aria-label", "Play"); return; }
    timer = setInterval(() => go(1), 700);
    button.textContent = "⏸ Pause"; button.setAttribute("aria-label", "Pause");
  }
  document.getElementById("next").addEventListener("click", () => go(1));
  document.getElementById("prev").addEventListener("click", () => go(-1));
  document.getElementById("first").addEventListener("click", () => { hand = 0; step = 0; render(); });
  document.getElementById("play").addEventListener("click", toggle);
  handSelect.addEventListener("change", () => { hand = Number(handSelect.value); step = 0; render(); });
  document.addEventListener("keydown", (event) => {
    const tag = event.target.tagName;
    if (tag === "SELECT" || tag === "INPUT" || tag === "TEXTAREA" || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === "ArrowRight") { go(1); event.preventDefault(); }
    if (event.key === "ArrowLeft") { go(-1); event.preventDefault(); }
    if (event.key === " " && tag !== "BUTTON" && tag !== "A") { toggle(); event.preventDefault(); }
    if (event.key === "Home") { hand = 0; step = 0; render(); event.preventDefault(); }
  });
  function fromHash() {
    const match = /^#h(\d+)s(\d+)$/.exec(window.location.hash);
    if (!match) return false;
    hand = Math.max(0, Math.min(Number(match[1]) - 1, data.hands.length - 1));
    step = Number(match[2]);
    return true;
  }
  window.addEventListener("hashchange", () => { if (fromHash()) render(); });
  fromHash();
  render();
})();
