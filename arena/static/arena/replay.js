// The match replay viewer: draws frames computed on the server by the engine (no rule here).
"use strict";
(function () {
  const root = document.getElementById("replay");
  if (!root) return;
  const data = JSON.parse(root.dataset.frames);
  const names = JSON.parse(root.dataset.names);
  const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
  const order = "23456789TJQKA";
  let hand = 0, step = 0, timer = null;  // step 0: after passing; step k: k cards played

  const handSelect = document.getElementById("hand");
  data.hands.forEach((h, i) => {
    const option = document.createElement("option");
    option.value = i; option.textContent = `${i + 1}${h.void ? " (void)" : ""}`;
    handSelect.appendChild(option);
  });

  function plays(h) { return h.tricks.flatMap((t) => t.plays); }
  function card(text) {
    const span = document.createElement("span");
    span.className = "card" + ("HD".includes(text[1]) ? " red" : "");
    span.textContent = text[0].replace("T", "10") + SUITS[text[1]];
    span.setAttribute("aria-label", text);
    return span;
  }
  function sortCards(cards) {
    return cards.slice().sort((a, b) => "CDHS".indexOf(a[1]) - "CDHS".indexOf(b[1]) || order.indexOf(a[0]) - order.indexOf(b[0]));
  }

  function render() {
    const h = data.hands[hand];
    const all = plays(h);
    step = Math.max(0, Math.min(step, all.length));
    const shown = all.slice(0, step);
    const trickIndex = step === 0 ? -1 : Math.floor((step - 1) / data.players);
    const inTrick = step === 0 ? [] : shown.slice(trickIndex * data.players, step);
    const trick = trickIndex >= 0 ? h.tricks[trickIndex] : null;
    const complete = trick && inTrick.length === trick.plays.length;
    const taken = trickIndex > 0 || complete ? h.tricks[complete ? trickIndex : trickIndex - 1].taken : new Array(data.players).fill(0);
    const table = document.getElementById("table");
    table.innerHTML = "";
    for (let seat = 0; seat < data.players; seat++) {
      const box = document.createElement("div");
      box.className = "seat";
      box.dataset.seat = seat;
      const remaining = h.hands[seat].slice();
      shown.forEach(([s, c]) => { if (s === seat) remaining.splice(remaining.indexOf(c), 1); });
      const title = document.createElement("h3");
      title.textContent = `${names[seat]} · seat ${seat} · ${taken[seat]} points`;
      if (complete && trick.winner === seat) title.textContent += " · takes the trick";
      box.appendChild(title);
      const cards = document.createElement("div");
      cards.className = "cards";
      sortCards(remaining).forEach((c) => cards.appendChild(card(c)));
      box.appendChild(cards);
      const faults = (data.faults && data.faults[seat]) || [];
      if (faults.length) { const f = document.createElement("p"); f.className = "fault"; f.textContent = `${faults.length} fault(s)`; box.appendChild(f); }
      table.appendChild(box);
    }
    const centre = document.createElement("div");
    centre.className = "trick";
    centre.setAttribute("aria-label", "Cards on the table");
    inTrick.forEach(([s, c]) => {
      const item = card(c);
      item.title = names[s];
      const who = document.createElement("small");
      who.className = "who";
      who.textContent = names[s];
      const slot = document.createElement("span");
      slot.className = "played";
      slot.append(item, who);
      centre.appendChild(slot);
    });
    table.appendChild(centre);
    let text = `Hand ${hand + 1}, `;
    text += step === 0 ? `after passing (${h.pass_direction})` : `trick ${trickIndex + 1}, card ${inTrick.length} of ${data.players}`;
    if (complete && trick.winner !== null) text += ` — ${names[trick.winner]} takes it`;
    if (complete && trick.winner === null) text += " — every card cancelled: nobody takes it";
    if (step === all.length) {
      text += `. Scores ${h.scores.join(", ")}; totals ${h.totals.join(", ")}`;
      if (h.shooter !== null) text += ` — ${names[h.shooter]} shot the moon!`;
    }
    document.getElementById("status").textContent = text;
    document.getElementById("share").href = `#h${hand + 1}s${step}`;
    handSelect.value = hand;
  }

  function go(delta) {
    step += delta;
    const total = plays(data.hands[hand]).length;
    if (step > total && hand < data.hands.length - 1) { hand += 1; step = 0; }
    if (step < 0 && hand > 0) { hand -= 1; step = plays(data.hands[hand]).length; }
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
    if (event.target.tagName === "SELECT") return;
    if (event.key === "ArrowRight") { go(1); event.preventDefault(); }
    if (event.key === "ArrowLeft") { go(-1); event.preventDefault(); }
    if (event.key === " ") { toggle(); event.preventDefault(); }
  });
  const match = /^#h(\d+)s(\d+)$/.exec(window.location.hash);
  if (match) { hand = Math.min(Number(match[1]) - 1, data.hands.length - 1); step = Number(match[2]); }
  render();
})();
