//! The Bidel protocol: JSON lines with the referee over stdin/stdout (docs/protocol.md).
//!
//! You should not need to change this file. Implement [`Bot`] (in `bot.rs`) and call
//! [`run`] from `main`. Only the protocol's replies go to stdout; log with `eprintln!`.

#![allow(dead_code)] // the API is wider than the example bot uses

pub mod json;

use std::io::{self, BufRead, Write};
use std::panic::{self, AssertUnwindSafe};
use std::process;
use std::sync::Mutex;

pub use json::Json;

/// A card's two-character text: rank then suit, e.g. "2C", "TD", "QS", "AH".
pub type Card = String;

/// Ranks from lowest to highest, and the suits in their usual order.
pub const RANKS: &str = "23456789TJQKA";
pub const SUITS: &str = "CDHS";

/// A card's rank: 0 for a two ... 12 for an ace.
pub fn rank(card: &str) -> usize {
    card.chars()
        .next()
        .and_then(|r| RANKS.find(r))
        .unwrap_or_else(|| panic!("not a card: {card:?}"))
}

/// A card's suit letter: 'C', 'D', 'H' or 'S'.
pub fn suit(card: &str) -> char {
    card.chars()
        .nth(1)
        .unwrap_or_else(|| panic!("not a card: {card:?}"))
}

/// The rules resolved, from `hello`'s `settings` (the usual values when it has none).
#[derive(Clone, Debug)]
pub struct Settings {
    /// The preset's name ("standard", "hokm_40", ...), if the rules came from one.
    pub preset: Option<String>,
    pub players: usize,
    pub pass_count: usize,
    pub hand_size: usize,
    pub deck_size: usize,
    /// The points of a moon shot.
    pub moon_amount: i64,
    pub hokm: bool,
    /// Every setting as sent (`direction`, `moon`, `queen_points`, `kitty`, ...).
    pub json: Json,
}

impl Settings {
    fn from_json(json: Json) -> Settings {
        let int = |key, default| json.get(key).and_then(Json::as_i64).unwrap_or(default);
        Settings {
            preset: json
                .get("preset")
                .and_then(Json::as_str)
                .map(str::to_string),
            players: int("players", 4) as usize,
            pass_count: int("pass_count", 3) as usize,
            hand_size: int("hand_size", 13) as usize,
            deck_size: int("deck_size", 52) as usize,
            moon_amount: int("moon_amount", 26),
            hokm: json.get("hokm").and_then(Json::as_bool).unwrap_or(false),
            json,
        }
    }
}

/// What `hello` says about the game: this bot's seat, its RNG seed and the rules.
#[derive(Clone, Debug)]
pub struct Game {
    pub seat: usize,
    pub seed: u64,
    /// The rules spec: a preset's name (a string) or an object.
    pub rules: Json,
    pub settings: Settings,
}

/// A completed trick.
#[derive(Clone, Debug)]
pub struct Trick {
    pub leader: usize,
    /// `(seat, card)` in play order.
    pub plays: Vec<(usize, Card)>,
    /// None when Cancellation cancelled everything.
    pub winner: Option<usize>,
}

/// What the bot sees when it decides (and at `hand_end` / `game_end`).
/// Card lists are sorted as the strings sort.
#[derive(Clone, Debug)]
pub struct View {
    pub seat: usize,
    /// The rules spec: a preset's name (a string) or an object.
    pub rules: Json,
    pub hand: Vec<Card>,
    /// The actions allowed now: cards, or suit letters (trump), or "add"/"subtract" (moon).
    pub legal: Vec<String>,
    /// "pass", "play", "trump", "moon", or "none" at hand_end / game_end.
    pub decision: String,
    /// The current trick, `(seat, card)` in play order.
    pub trick: Vec<(usize, Card)>,
    /// This hand's completed tricks.
    pub tricks: Vec<Trick>,
    /// The seat that leads the current trick (None outside play).
    pub leader: Option<usize>,
    /// Card points each seat has taken this hand; game totals.
    pub points_taken: Vec<i64>,
    pub totals: Vec<i64>,
    /// "left", "right", "across" or "hold"; the passed cards go to `(seat + pass_offset) % n`.
    pub pass_direction: String,
    pub pass_offset: usize,
    pub passed: Vec<Card>,
    pub received: Vec<Card>,
    pub hearts_broken: bool,
    /// Hokm: the trump suit letter and the hakem's seat, once known.
    pub trump: Option<String>,
    pub hakem: Option<usize>,
    /// 0-based.
    pub hand_number: usize,
    /// Cards each seat still holds.
    pub cards_left: Vec<usize>,
    pub kitty_size: usize,
    pub kitty_taker: Option<usize>,
    /// Shown once the hand is over.
    pub kitty: Vec<Card>,
    /// At a hand's end: what it added to each total.
    pub scores: Option<Vec<i64>>,
    /// Seconds this move may take (move limit plus what is left of the bank).
    pub time_left: Option<f64>,
    /// The view as sent, for keys this kit does not know yet.
    pub json: Json,
}

impl View {
    pub fn from_json(json: Json) -> View {
        let get = |key| json.get(key).unwrap_or(&Json::Null);
        let uint = |key| get(key).as_usize();
        let strings = |key| -> Vec<String> {
            let items = get(key).as_array().unwrap_or(&[]);
            items
                .iter()
                .filter_map(|c| c.as_str().map(str::to_string))
                .collect()
        };
        let ints = |value: &Json| -> Vec<i64> {
            value
                .as_array()
                .unwrap_or(&[])
                .iter()
                .map(|n| n.as_i64().unwrap_or(0))
                .collect()
        };
        let tricks = get("tricks").as_array().unwrap_or(&[]);
        let mut view = View {
            seat: uint("seat").unwrap_or(0),
            rules: get("rules").clone(),
            hand: strings("hand"),
            legal: strings("legal"),
            decision: get("decision").as_str().unwrap_or("none").to_string(),
            trick: plays(get("trick")),
            tricks: tricks
                .iter()
                .map(|t| Trick {
                    leader: t.get("leader").and_then(Json::as_usize).unwrap_or(0),
                    plays: plays(t.get("plays").unwrap_or(&Json::Null)),
                    winner: t.get("winner").and_then(Json::as_usize),
                })
                .collect(),
            leader: uint("leader"),
            points_taken: ints(get("points_taken")),
            totals: ints(get("totals")),
            pass_direction: get("pass_direction").as_str().unwrap_or("hold").to_string(),
            pass_offset: uint("pass_offset").unwrap_or(0),
            passed: strings("passed"),
            received: strings("received"),
            hearts_broken: get("hearts_broken").as_bool().unwrap_or(false),
            trump: get("trump").as_str().map(str::to_string),
            hakem: uint("hakem"),
            hand_number: uint("hand_number").unwrap_or(0),
            cards_left: ints(get("cards_left"))
                .into_iter()
                .map(|n| n.max(0) as usize)
                .collect(),
            kitty_size: uint("kitty_size").unwrap_or(0),
            kitty_taker: uint("kitty_taker"),
            kitty: strings("kitty"),
            scores: get("scores").as_array().map(|_| ints(get("scores"))),
            time_left: get("time_left").as_f64(),
            json: Json::Null,
        };
        view.json = json;
        view
    }
}

/// `[[seat, card], ...]`
fn plays(value: &Json) -> Vec<(usize, Card)> {
    let pairs = value.as_array().unwrap_or(&[]);
    pairs
        .iter()
        .filter_map(|pair| match pair.as_array()? {
            [seat, card] => Some((seat.as_usize()?, card.as_str()?.to_string())),
            _ => None,
        })
        .collect()
}

/// A bot: one decision per method. Each must return one of `view.legal` (for `pass`, `count`
/// distinct cards of `view.hand`). A panic is reported to the referee as a crash.
pub trait Bot {
    /// The name shown in the arena (at most 64 characters).
    fn name(&self) -> String;
    /// The cards to pass (`count` of them, from `view.hand`).
    fn pass(&mut self, view: &View, count: usize) -> Vec<Card>;
    /// The card to play: one of `view.legal`.
    fn play(&mut self, view: &View) -> Card;
    /// Hokm, as the hakem: the trump suit, one of "C", "D", "H", "S".
    fn trump(&mut self, view: &View) -> String;
    /// After shooting the moon under `moon = "choice"`: "add" or "subtract".
    fn moon(&mut self, view: &View) -> String;
    /// A hand is over (`view.scores` says what it added). Optional.
    fn hand_end(&mut self, _view: &View) {}
    /// The game is over. Optional.
    fn game_end(&mut self, _view: &View) {}
}

/// Speaks the protocol until `bye` or the end of input, then exits. `make` builds the bot
/// from what `hello` says (its start-up work, unclocked, belongs there).
pub fn run<B: Bot>(make: impl FnOnce(Game) -> B) -> ! {
    // Keep each panic's message and place for the crash report (and still print it to stderr).
    let default_hook = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        *LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()) = Some(info.to_string());
        default_hook(info);
    }));

    let mut session = Session {
        make: Some(make),
        bot: None,
        pass_count: 3,
    };
    let mut input = io::stdin().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => process::exit(0),
            Ok(_) => {}
            Err(e) => {
                eprintln!("bidel: cannot read stdin: {e}");
                process::exit(0);
            }
        }
        let text = String::from_utf8_lossy(&line);
        if text.trim().is_empty() {
            continue;
        }
        let message = match json::parse(&text) {
            Ok(message) => message,
            Err(e) => {
                eprintln!("bidel: ignoring a line that is not JSON ({e})");
                continue;
            }
        };
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| session.handle(message))) {
            let detail = LAST_PANIC
                .lock()
                .ok()
                .and_then(|mut p| p.take())
                .unwrap_or_else(|| {
                    payload
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| payload.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "panic".to_string())
                });
            let detail: String = detail.chars().take(1000).collect();
            send(&Json::object([
                ("type", "error".into()),
                ("class", "crash".into()),
                ("detail", detail.into()),
            ]));
            process::exit(1);
        }
    }
}

static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

struct Session<B, F> {
    make: Option<F>,
    bot: Option<B>,
    pass_count: usize,
}

impl<B: Bot, F: FnOnce(Game) -> B> Session<B, F> {
    fn handle(&mut self, message: Json) {
        let kind = message.get("type").and_then(Json::as_str).unwrap_or("");
        match kind {
            "hello" => {
                let game = Game {
                    seat: message.get("seat").and_then(Json::as_usize).unwrap_or(0),
                    seed: match message.get("seed") {
                        Some(Json::Int(n)) => *n as u64,
                        _ => 0,
                    },
                    rules: message.get("rules").cloned().unwrap_or(Json::Null),
                    settings: Settings::from_json(
                        message.get("settings").cloned().unwrap_or(Json::Null),
                    ),
                };
                let name: String = self.bot(game).name().chars().take(64).collect();
                send(&Json::object([
                    ("type", "ready".into()),
                    ("name", name.into()),
                ]));
            }
            "act" => {
                let id = message.get("id").cloned().unwrap_or(Json::Null);
                let decision = message
                    .get("decision")
                    .and_then(Json::as_str)
                    .unwrap_or("")
                    .to_string();
                let count = message
                    .get("count")
                    .and_then(Json::as_usize)
                    .unwrap_or(self.pass_count);
                let view = View::from_json(message.get("view").cloned().unwrap_or(Json::Null));
                let bot = self.bot_for(&view);
                let action: Json = match decision.as_str() {
                    "pass" => bot.pass(&view, count).into(),
                    "play" => bot.play(&view).into(),
                    "trump" => bot.trump(&view).into(),
                    "moon" => bot.moon(&view).into(),
                    other => {
                        eprintln!(
                            "bidel: unknown decision {other:?}; answering the first legal action"
                        );
                        view.legal
                            .first()
                            .cloned()
                            .map(Json::from)
                            .unwrap_or(Json::Null)
                    }
                };
                send(&Json::object([
                    ("type", "action".into()),
                    ("id", id),
                    ("action", action),
                ]));
            }
            "hand_end" | "game_end" => {
                let view = View::from_json(message.get("view").cloned().unwrap_or(Json::Null));
                let bot = self.bot_for(&view);
                if kind == "hand_end" {
                    bot.hand_end(&view);
                } else {
                    bot.game_end(&view);
                }
            }
            "bye" => process::exit(0),
            _ => {} // a message this kit does not know: the protocol grows
        }
    }

    /// The bot, built from `game` the first time.
    fn bot(&mut self, game: Game) -> &mut B {
        self.pass_count = game.settings.pass_count;
        if let Some(make) = self.make.take() {
            self.bot = Some(make(game));
        }
        self.bot.as_mut().expect("the bot was built")
    }

    /// The bot, built from the view when no `hello` came first.
    fn bot_for(&mut self, view: &View) -> &mut B {
        if self.bot.is_none() {
            let settings = Settings::from_json(Json::Null);
            self.bot(Game {
                seat: view.seat,
                seed: 0,
                rules: view.rules.clone(),
                settings,
            });
        }
        self.bot.as_mut().expect("the bot was built")
    }
}

/// Writes one message as a line and flushes it.
fn send(message: &Json) {
    let mut out = io::stdout().lock();
    if writeln!(out, "{message}")
        .and_then(|()| out.flush())
        .is_err()
    {
        process::exit(0); // the referee has gone
    }
}
