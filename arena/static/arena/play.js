// A person's seat: the runner's questions arrive over a WebSocket with the view a bot gets
// (hand, legal cards, trick…); the answer goes back the same way. No rule here: the legal
// cards are the view's, and the runner judges every answer (an illegal one is refused and
// asked again). A reload replays the seat's messages so far and resumes the question open.
"use strict";
(function () {
  const root = document.getElementById("play");
  if (!root) return;
  const fmt = (format, values) => interpolate(format, values, true);
  const persian = document.documentElement.lang.startsWith("fa");
  const names = JSON.parse(document.getElementById("replay").dataset.names);  // "you" at the seat
  const num = (n) => (persian ? String(n).replace(/[0-9]/g, (d) => "۰۱۲۳۴۵۶۷۸۹"[d]) : String(n));
  const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
  const SUIT_NAMES = { C: gettext("clubs"), D: gettext("diamonds"), H: gettext("hearts"), S: gettext("spades") };
  const RANK_NAMES = { T: "10", J: gettext("jack"), Q: gettext("queen"), K: gettext("king"), A: gettext("ace") };
  const MOON = { add: gettext("add 26 to the others"), subtract: gettext("take 26 from my score") };
  const order = "23456789TJQKA";
  const handBox = document.getElementById("hand");
  const choices = document.getElementById("choices");
  const prompt = document.getElementById("prompt");
  const clock = document.getElementById("clock");
  const notice = document.getElementById("notice");
  // Read by the browser tests: the open question, what was sent, the messages seen.
  const state = (window.bidelPlay = { connected: false, pending: null, view: null, chosen: [], closed: false, seen: 0 });

  const spoken = (c) => fmt(gettext("%(rank)s of %(suit)s"), { rank: RANK_NAMES[c[0]] || c[0], suit: SUIT_NAMES[c[1]] });
  const sorted = (cards) => cards.slice().sort((a, b) => "CDHS".indexOf(a[1]) - "CDHS".indexOf(b[1]) || order.indexOf(a[0]) - order.indexOf(b[0]));

  function cardButton(c, enabled, pressed) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "card" + ("HD".includes(c[1]) ? " red" : "") + (pressed ? " chosen" : "");
    button.dir = "ltr";
    button.textContent = c[0].replace("T", "10") + SUITS[c[1]];
    button.dataset.card = c;
    button.setAttribute("aria-label", spoken(c));
    if (pressed !== null) button.setAttribute("aria-pressed", pressed ? "true" : "false");
    button.disabled = !enabled;  // an illegal card cannot be chosen
    return button;
  }

  function send(action) {
    if (!state.pending || !socket || socket.readyState !== WebSocket.OPEN) return;
    socket.send(JSON.stringify({ id: state.pending.id, action }));
    state.sentFor = state.pending.id;
    render();
  }

  // The end of the game in words: who won (the lowest total), and where the person finished.
  function outcome(totals) {
    const best = Math.min(...totals);
    const winners = totals.map((t, s) => (t === best ? s : -1)).filter((s) => s >= 0);
    const seat = Number(root.dataset.seat);
    const points = num(best);
    if (winners.includes(seat)) {
      return winners.length === 1
        ? fmt(gettext("The game is over: you won, with %(points)s points."), { points })
        : fmt(gettext("The game is over: you tied for first, with %(points)s points."), { points });
    }
    const who = winners.map((s) => names[s]).join(gettext(", "));
    return fmt(gettext("The game is over: %(names)s won, with %(points)s points; you have %(mine)s."), { names: who, points, mine: num(totals[seat]) });
  }

  function render() {
    handBox.innerHTML = "";
    choices.innerHTML = "";
    const view = state.view;
    const ask = state.pending;
    const waiting = ask && state.sentFor === ask.id;
    if (state.closed) prompt.textContent = state.final ? outcome(state.final) : gettext("The game is over.");
    else if (!ask) prompt.textContent = view ? gettext("Waiting for the other players…") : gettext("Waiting for the deal…");
    else if (waiting) prompt.textContent = gettext("Sent; waiting for the referee…");
    else if (ask.decision === "play") prompt.textContent = gettext("Your turn: play a card.");
    else if (ask.decision === "pass") prompt.textContent = fmt(gettext("Choose %(count)s cards to pass, then confirm."), { count: num(ask.count) });
    else if (ask.decision === "trump") prompt.textContent = gettext("You are the hakem: declare trumps.");
    else if (ask.decision === "moon") prompt.textContent = gettext("You shot the moon: choose.");
    if (!view) return;
    if (view.trump && !state.closed) {
      prompt.textContent += " " + fmt(gettext("Trumps: %(suit)s."), { suit: `${SUITS[view.trump]} ${SUIT_NAMES[view.trump]}` });
    }
    const active = ask && !waiting;
    sorted(view.hand).forEach((c) => {
      if (active && ask.decision === "pass") {
        const pressed = state.chosen.includes(c);
        const button = cardButton(c, true, pressed);
        button.addEventListener("click", () => {
          state.chosen = pressed ? state.chosen.filter((x) => x !== c) : state.chosen.concat([c]).slice(-ask.count);
          render();
          const again = handBox.querySelector(`[data-card="${c}"]`);
          if (again) again.focus();
        });
        handBox.appendChild(button);
      } else {
        const legal = active && ask.decision === "play" && ask.view.legal.includes(c);
        const button = cardButton(c, legal, null);
        if (legal) button.addEventListener("click", () => send(c));
        handBox.appendChild(button);
      }
    });
    if (active && ask.decision === "pass") {
      const confirm = document.createElement("button");
      confirm.type = "button";
      confirm.id = "confirm";
      confirm.textContent = fmt(gettext("Pass these %(count)s cards"), { count: num(ask.count) });
      confirm.disabled = state.chosen.length !== ask.count;
      confirm.addEventListener("click", () => send(state.chosen.slice()));
      choices.appendChild(confirm);
    }
    if (active && (ask.decision === "trump" || ask.decision === "moon")) {
      ask.view.legal.forEach((option) => {
        const button = document.createElement("button");
        button.type = "button";
        button.dataset.option = option;
        button.textContent = ask.decision === "trump" ? `${SUITS[option] || ""} ${SUIT_NAMES[option] || option}` : MOON[option] || option;
        button.addEventListener("click", () => send(option));
        choices.appendChild(button);
      });
    }
  }

  function tick() {
    const ask = state.pending;
    if (!ask || state.sentFor === ask.id) { clock.textContent = ""; return; }
    const left = Math.max(0, Math.round(ask.until - Date.now() / 1000));
    clock.textContent = fmt(gettext("%(seconds)s s left on your clock"), { seconds: num(left) });
  }
  window.setInterval(tick, 1000);

  function onMessage(message) {
    state.seen += 1;
    if (message.type === "hello") { state.connected = true; return; }
    if (message.type === "finished") { window.location.href = root.dataset.match; return; }
    if (message.type === "refused" && message.id === undefined) {  // not this browser's seat
      state.closed = true;
      notice.textContent = gettext("This game is not yours to play in this browser.");
      render();
      return;
    }
    if (message.type === "left") notice.textContent = fmt(gettext("The referee plays your seat to the end: %(why)s."), { why: message.why });
    if (message.type === "decide") {
      state.pending = message;
      state.view = message.view;
      if (message.decision !== "pass") state.chosen = [];
      notice.textContent = "";
    }
    if ((message.type === "accepted" || message.type === "timeout") && state.pending && message.id === state.pending.id) {
      if (message.type === "timeout") notice.textContent = gettext("Your clock ran out: the referee played for you.");
      if (message.type === "accepted" && state.view) {
        const played = [].concat(message.action);
        state.view = { ...state.view, hand: state.view.hand.filter((c) => !played.includes(c)) };
      }
      state.pending = null;
      state.chosen = [];
      state.sentFor = null;
    }
    if (message.type === "refused" && state.pending && message.id === state.pending.id) {
      state.sentFor = null;
      notice.textContent = fmt(gettext("Not accepted: %(why)s"), { why: message.why });
    }
    if (message.type === "hand_end" || message.type === "game_end") state.view = message.view;
    if (message.type === "game_end" && message.view) state.final = message.view.totals;
    if (message.type === "closed") state.closed = true;
    render();
    tick();
  }

  let socket = null;
  function connect(delay) {
    const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + window.location.host + root.dataset.play);
    socket.addEventListener("open", () => {  // the seat's messages so far come again: start clean
      Object.assign(state, { pending: null, view: null, chosen: [], sentFor: null, seen: 0 });
    });
    socket.addEventListener("message", (event) => onMessage(JSON.parse(event.data)));
    socket.addEventListener("close", () => {
      if (!state.closed) window.setTimeout(() => connect(Math.min(delay * 2, 8000)), delay);
    });
  }
  connect(500);
  render();
})();
