//! A Bidel bot in Rust. Your strategy is in `bot.rs`; `bidel.rs` speaks the protocol.
//!
//! Build: rustc --edition 2021 -O -o bot src/main.rs     Run: ./bot

mod bidel;
mod bot;

fn main() {
    bidel::run(bot::Lowest::new);
}
