// A person's seat: the runner's questions arrive over a WebSocket with the view a bot gets
// (hand, legal cards, trick…); the answer goes back the same way. No rule here: the legal
// cards are the view's, and the runner judges every answer (an illegal one is refused and
// asked again). A reload replays the seat's messages so far and resumes the question open.
// The hand sits in the person's own seat at the bottom of the table replay.js draws; the pass
// being chosen, and the one sent, show on that table at the seat that receives it.
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
  const DIRECTIONS = { left: gettext("left"), right: gettext("right"), across: gettext("across"), hold: gettext("hold") };
  const order = "23456789TJQKA";
  const seat = Number(root.dataset.seat);
  const mySeat = document.getElementById("my-seat");
  const handBox = document.getElementById("hand");
  const choices = document.getElementById("choices");
  const prompt = document.getElementById("prompt");
  const clock = document.getElementById("clock");
  const notice = document.getElementById("notice");
  const coach = document.getElementById("coach");
  const hintToggle = document.getElementById("hint-toggle");
  const hintLine = document.getElementById("hint-line");
  // Read by the browser tests: the open question, what was sent, the messages seen; `feed`
  // hands the page a message as if the seat's feed had sent it.
  const state = (window.bidelPlay = { connected: false, pending: null, view: null, chosen: [], closed: false, seen: 0, hint: false });

  const spoken = (c) => fmt(gettext("%(rank)s of %(suit)s"), { rank: RANK_NAMES[c[0]] || c[0], suit: SUIT_NAMES[c[1]] });
  const sorted = (cards) => cards.slice().sort((a, b) => "CDHS".indexOf(a[1]) - "CDHS".indexOf(b[1]) || order.indexOf(a[0]) - order.indexOf(b[0]));
  // An answer in words: a card, cards, a suit (trumps) or a moon choice.
  function said(action) {
    return [].concat(action).map((a) => (/^[2-9TJQKA][CDHS]$/.test(a) ? spoken(a) : SUIT_NAMES[a] || MOON[a] || a)).join(gettext(", "));
  }

  function cardButton(c, enabled, pressed, notes) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "card" + ("HD".includes(c[1]) ? " red" : "") + (pressed ? " chosen" : "") + (notes.received ? " received" : "") + (notes.hinted ? " hinted" : "");
    button.dir = "ltr";
    button.textContent = c[0].replace("T", "10") + SUITS[c[1]];
    button.dataset.card = c;
    const label = [spoken(c)];
    if (notes.received) label.push(gettext("received"));
    if (notes.hinted) label.push(gettext("coach suggests"));
    button.setAttribute("aria-label", label.join(gettext(", ")));
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
    const points = num(best);
    if (winners.includes(seat)) {
      return winners.length === 1
        ? fmt(gettext("The game is over: you won, with %(points)s points."), { points })
        : fmt(gettext("The game is over: you tied for first, with %(points)s points."), { points });
    }
    const who = winners.map((s) => names[s]).join(gettext(", "));
    return fmt(gettext("The game is over: %(names)s won, with %(points)s points; you have %(mine)s."), { names: who, points, mine: num(totals[seat]) });
  }

  // The seat this hand's pass goes to (the view says how many seats onward).
  function passTarget(view) {
    return (seat + view.pass_offset) % view.cards_left.length;
  }

  // What the table shows of the person's pass: the seat it goes to while they choose, then the
  // cards sent there (the table shows them at the hand's steps before its first card).
  let told = "";
  function tellTable() {
    const view = state.view, ask = state.pending;
    const notes = { passing: null, passed: null };
    if (view && view.pass_offset) {
      const where = { number: view.hand_number, to: passTarget(view) };
      if (ask && ask.decision === "pass") notes.passing = { ...where, direction: view.pass_direction };
      else if (state.passed && state.passed.number === view.hand_number) notes.passed = { ...where, cards: state.passed.cards };
      else if (view.passed && view.passed.length) notes.passed = { ...where, cards: view.passed };
    }
    const key = JSON.stringify(notes);
    if (!window.bidelTable || (key === told && !state.passFrom)) return;
    told = key;
    if (notes.passed && state.passFrom) notes.passed.from = state.passFrom;  // where they fly from
    state.passFrom = null;
    window.bidelTable.set(notes);
  }

  function render() {
    handBox.innerHTML = "";
    choices.innerHTML = "";
    const view = state.view;
    const ask = state.pending;
    const waiting = ask && state.sentFor === ask.id;
    const active = ask && !waiting;
    mySeat.classList.toggle("asked", Boolean(active));
    if (state.closed) prompt.textContent = state.final ? outcome(state.final) : gettext("The game is over.");
    else if (!ask) prompt.textContent = view ? gettext("Waiting for the other players…") : gettext("Waiting for the deal…");
    else if (waiting) prompt.textContent = gettext("Sent; waiting for the referee…");
    else if (ask.decision === "play") prompt.textContent = gettext("Your turn: play a card.");
    else if (ask.decision === "pass") {
      prompt.textContent = fmt(gettext("Choose %(count)s cards to pass %(direction)s, to %(name)s, then confirm."), {
        count: num(ask.count), direction: DIRECTIONS[ask.view.pass_direction] || ask.view.pass_direction, name: names[passTarget(ask.view)],
      });
    }
    else if (ask.decision === "trump") prompt.textContent = gettext("You are the hakem: declare trumps.");
    else if (ask.decision === "moon") prompt.textContent = gettext("You shot the moon: choose.");
    // The coach's hint, when the question carries one: shown only when asked for.
    const hint = active && ask.hint && ask.hint.action !== undefined && ask.hint.action !== null ? ask.hint : null;
    coach.hidden = !hint;
    hintToggle.setAttribute("aria-pressed", state.hint ? "true" : "false");
    const suggested = hint && state.hint ? [].concat(hint.action) : [];
    hintLine.textContent = suggested.length ? fmt(gettext("The coach suggests: %(action)s"), { action: said(hint.action) }) + (hint.why ? ` — ${hint.why}` : "") : "";
    tellTable();
    if (!view) return;
    if (view.trump && !state.closed) {
      prompt.textContent += " " + fmt(gettext("Trumps: %(suit)s."), { suit: `${SUITS[view.trump]} ${SUIT_NAMES[view.trump]}` });
    }
    // The cards received in the pass stay marked until the first card is played.
    const received = view.trick.length || view.tricks.length ? [] : view.received || [];
    sorted(view.hand).forEach((c) => {
      const notes = { received: received.includes(c), hinted: suggested.includes(c) };
      if (active && ask.decision === "pass") {
        const pressed = state.chosen.includes(c);
        const button = cardButton(c, true, pressed, notes);
        button.addEventListener("click", () => {
          state.chosen = pressed ? state.chosen.filter((x) => x !== c) : state.chosen.concat([c]).slice(-ask.count);
          render();
          const again = handBox.querySelector(`[data-card="${c}"]`);
          if (again) again.focus();
        });
        handBox.appendChild(button);
      } else {
        const legal = active && ask.decision === "play" && ask.view.legal.includes(c);
        const button = cardButton(c, legal, null, notes);
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
        if (suggested.includes(option)) {
          button.classList.add("hinted");
          button.setAttribute("aria-label", button.textContent + gettext(", ") + gettext("coach suggests"));
        }
        button.addEventListener("click", () => send(option));
        choices.appendChild(button);
      });
    }
  }
  hintToggle.addEventListener("click", () => { state.hint = !state.hint; render(); });

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
        if (state.pending.decision === "pass") {
          // The passed cards leave the hand for the seat they go to, from where they are now.
          const from = {};
          played.forEach((c) => {
            const button = handBox.querySelector(`[data-card="${c}"]`);
            if (button) from[c] = button.getBoundingClientRect();
          });
          state.passed = { number: state.view.hand_number, cards: played };
          state.passFrom = from;
        }
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
  state.feed = onMessage;

  let socket = null;
  function connect(delay) {
    const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + window.location.host + root.dataset.play);
    socket.addEventListener("open", () => {  // the seat's messages so far come again: start clean
      Object.assign(state, { pending: null, view: null, chosen: [], sentFor: null, seen: 0, passed: null, passFrom: null });
    });
    socket.addEventListener("message", (event) => onMessage(JSON.parse(event.data)));
    socket.addEventListener("close", () => {
      if (!state.closed) window.setTimeout(() => connect(Math.min(delay * 2, 8000)), delay);
    });
  }
  connect(500);
  render();
})();
