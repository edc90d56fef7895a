//! YOUR STRATEGY GOES HERE.
//!
//! This example decides exactly like the referee's built-in `low` bot: it passes its highest
//! cards and plays its lowest legal card. Replace the bodies below (and rename the bot).
//! Log with `eprintln!`; never print to stdout.

use crate::bidel::{rank, suit, Bot, Card, Game, View, SUITS};

pub struct Lowest {
    game: Game,
}

impl Lowest {
    /// Called once, after `hello`: seat, seed and rules are in `game`. Start-up work
    /// (tables, an RNG seeded with `game.seed`) belongs here; it is not clocked.
    pub fn new(game: Game) -> Self {
        Lowest { game }
    }
}

/// Orders cards by rank, then suit (clubs < diamonds < hearts < spades).
fn low_key(card: &str) -> (usize, usize) {
    (rank(card), SUITS.find(suit(card)).unwrap_or(0))
}

impl Bot for Lowest {
    fn name(&self) -> String {
        "low (rust)".to_string()
    }

    fn pass(&mut self, view: &View, count: usize) -> Vec<Card> {
        let mut cards = view.hand.clone();
        cards.sort_by_key(|c| std::cmp::Reverse(low_key(c)));
        cards.truncate(count);
        cards
    }

    fn play(&mut self, view: &View) -> Card {
        view.legal
            .iter()
            .min_by_key(|c| low_key(c))
            .cloned()
            .expect("no legal card")
    }

    /// The suit held most of (ties: the later of C D H S).
    fn trump(&mut self, view: &View) -> String {
        let held = |s: char| view.hand.iter().filter(|c| suit(c) == s).count();
        SUITS
            .chars()
            .max_by_key(|&s| (held(s), s))
            .unwrap()
            .to_string()
    }

    /// Whichever leaves this bot furthest ahead of the best other total.
    fn moon(&mut self, view: &View) -> String {
        let amount = self.game.settings.moon_amount;
        let mine = view.totals[view.seat];
        let others = view
            .totals
            .iter()
            .enumerate()
            .filter(|&(s, _)| s != view.seat);
        let best_other = others.map(|(_, &t)| t).min().unwrap_or(mine);
        let add_margin = best_other + amount - mine;
        let subtract_margin = best_other - (mine - amount);
        if add_margin > subtract_margin {
            "add"
        } else {
            "subtract"
        }
        .to_string()
    }
}
