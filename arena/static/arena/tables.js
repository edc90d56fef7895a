// A tournament's running tables, live: each follows its match's feed (the same WebSocket as
// the match page) and says where the game is — the hand, the cards played, the totals.
"use strict";
(function () {
  const fmt = (format, values) => interpolate(format, values, true);
  const persian = document.documentElement.lang.startsWith("fa");
  const num = (n) => (persian ? String(n).replace(/[0-9]/g, (d) => "۰۱۲۳۴۵۶۷۸۹"[d]) : String(n));
  document.querySelectorAll(".live-table[data-live]").forEach((span) => {
    const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    const socket = new WebSocket(scheme + window.location.host + span.dataset.live);
    socket.addEventListener("message", (message) => {
      const event = JSON.parse(message.data);
      if (event.type === "frame") {
        const frame = event.frame;
        const played = frame.tricks.reduce((n, t) => n + t.plays.length, 0);
        const totals = frame.totals || frame.totals_before || [];
        span.textContent = "— " + fmt(gettext("live: hand %(hand)s, %(played)s cards played, totals %(totals)s"), {
          hand: num(event.hand + 1), played: num(played), totals: totals.map(num).join(gettext(", ")),
        });
      }
      if (event.type === "stored" || event.type === "finished") span.textContent = "— " + gettext("finished");
    });
  });
})();
