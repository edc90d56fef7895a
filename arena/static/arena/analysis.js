// A match's analysis, seat by seat (the API's /api/matches/N/analysis/S/: bidel analyse's
// numbers, made on the runners): one bar per pass and play the seat had a choice in, as long as the
// points it lost, marked as chess marks a move; a bar takes the replay to that play, and the
// play the replay shows is the one marked current. No rule and no number is made here.
"use strict";
(function () {
  const root = document.getElementById("analysis");
  const replay = document.getElementById("replay");
  if (!root || !replay) return;
  const fmt = (format, values) => interpolate(format, values, true);
  const persian = document.documentElement.lang.startsWith("fa");
  const num = (n) => (persian ? String(n).replace(/[0-9]/g, (d) => "۰۱۲۳۴۵۶۷۸۹"[d]) : String(n));
  const points = (x) => num(Number(x).toFixed(2));
  const names = JSON.parse(replay.dataset.names);
  const frames = JSON.parse(replay.dataset.frames);
  const known = JSON.parse(root.dataset.analyses);  // seat → the API's document
  const address = (seat) => `${root.dataset.api}${seat}/?samples=${root.dataset.samples}`;
  const seatBox = document.getElementById("analysis-seat");
  const askButton = document.getElementById("analysis-ask");
  const statusLine = document.getElementById("analysis-status");
  const list = document.getElementById("analysis-decisions");
  const MARKS = { blunder: gettext("blunder"), mistake: gettext("mistake"), inaccuracy: gettext("inaccuracy") };
  const SYMBOLS = { blunder: "??", mistake: "?", inaccuracy: "?!" };
  // Read by the browser tests: the documents shown.
  const state = (window.bidelAnalysis = { known, shown: null });

  // The replay's step that shows a decision's card on the table.
  function stepOf(decision, seat) {
    if (decision.decision === "pass") return 0;  // the deal, with the cards passed
    const hand = frames.hands[decision.hand];
    let index = 0;
    for (let t = 0; t < decision.trick; t++) index += hand.tricks[t].plays.length;
    const here = hand.tricks[decision.trick].plays.findIndex(([s, c]) => s === seat && c === decision.played);
    return (hand.passes ? 1 : 0) + index + Math.max(0, here) + 1;
  }

  function render() {
    const seat = Number(seatBox.value);
    const doc = known[seat];
    state.shown = doc || null;
    list.innerHTML = "";
    if (askButton) askButton.hidden = Boolean(doc && doc.status !== "failed");
    if (!doc) {
      statusLine.textContent = askButton ? gettext("This seat has not been analysed yet.") : gettext("This seat has not been analysed yet: sign in to ask for it.");
      return;
    }
    if (doc.status === "queued") { statusLine.textContent = gettext("Analysing on the runners…"); return; }
    if (doc.status === "failed") { statusLine.textContent = fmt(gettext("The analysis failed: %(why)s"), { why: doc.error }); return; }
    const marks = Object.keys(MARKS).filter((m) => doc.marks[m]).map((m) => `${num(doc.marks[m])} ${MARKS[m]}`);
    statusLine.textContent = fmt(gettext("%(name)s: %(count)s decisions analysed on %(samples)s deals each; %(lost)s points lost in all (a hand's points, lower is better)."), {
      name: names[seat], count: num(doc.decisions.length), samples: num(doc.samples), lost: points(doc.lost),
    }) + (marks.length ? " " + marks.join(gettext(", ")) + "." : "");
    const top = Math.max(4, ...doc.decisions.map((d) => d.lost));
    doc.decisions.forEach((d) => {
      const item = document.createElement("li");
      item.dataset.hand = d.hand;
      item.dataset.step = stepOf(d, seat);
      const button = document.createElement("button");
      button.type = "button";
      button.className = "decision" + (d.mark ? " " + d.mark : "");
      const where = d.decision === "pass"
        ? fmt(gettext("hand %(hand)s, the pass"), { hand: num(d.hand + 1) })
        : fmt(gettext("hand %(hand)s, trick %(trick)s"), { hand: num(d.hand + 1), trick: num(d.trick + 1) });
      const label = document.createElement("span");
      label.className = "where";
      label.textContent = where + " ";
      const card = document.createElement("span");
      card.dir = "ltr";
      card.textContent = d.played + (d.mark ? SYMBOLS[d.mark] : "");
      label.appendChild(card);
      const bar = document.createElement("span");
      bar.className = "lost";
      bar.setAttribute("aria-hidden", "true");
      bar.style.width = `${Math.min(100, (100 * d.lost) / top)}%`;
      const said = document.createElement("span");
      said.className = "said";
      said.textContent = (d.mark ? MARKS[d.mark] + ": " : "") + fmt(gettext("lost %(lost)s [%(low)s, %(high)s]; best %(best)s"), {
        lost: points(d.lost), low: points(d.interval[0]), high: points(d.interval[1]), best: d.best,
      });
      button.append(label, bar, said);
      button.addEventListener("click", () => { if (window.bidelReplay) window.bidelReplay.goto(d.hand, Number(item.dataset.step)); });
      item.appendChild(button);
      list.appendChild(item);
    });
  }

  // The replay's position: the play it shows, if analysed, is the current one.
  replay.addEventListener("bidel:step", (event) => {
    const { hand, step } = event.detail;
    list.querySelectorAll("li").forEach((item) => {
      const current = Number(item.dataset.hand) === hand && Number(item.dataset.step) === step;
      if (current) item.setAttribute("aria-current", "step");
      else item.removeAttribute("aria-current");
    });
  });

  async function follow(seat, response) {
    let pause = 1000;
    while (response.ok) {
      known[seat] = await response.json();
      if (Number(seatBox.value) === seat) render();
      if (known[seat].status !== "queued") return;
      await new Promise((done) => window.setTimeout(done, pause));  // (a runner's job: polled)
      pause = Math.min(pause * 1.5, 10000);
      response = await fetch(address(seat), { credentials: "same-origin" });
    }
    const body = await response.json().catch(() => ({}));
    const detail = body.detail ? [].concat(body.detail).join(" ") : response.statusText;
    statusLine.textContent = fmt(gettext("Not asked: %(why)s"), { why: detail });
  }

  if (askButton) {
    askButton.addEventListener("click", () => {
      const seat = Number(seatBox.value);
      const token = root.querySelector("input[name=csrfmiddlewaretoken]").value;
      askButton.disabled = true;
      statusLine.textContent = gettext("Asking…");
      fetch(address(seat), { method: "POST", credentials: "same-origin", headers: { "X-CSRFToken": token } })
        .then((response) => follow(seat, response))
        .finally(() => { askButton.disabled = false; });
    });
  }
  seatBox.addEventListener("change", render);
  render();
})();
