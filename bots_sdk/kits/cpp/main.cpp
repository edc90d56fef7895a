// main.cpp: your bot. YOUR STRATEGY GOES HERE.
//
// This one decides exactly like the referee's built-in `low` bot: it passes its highest cards
// and plays its lowest legal card. Change the four methods below (bidel.hpp does the talking).
// Log with std::cerr; never write to std::cout.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bidel.hpp"

using bidel::Card;
using bidel::View;

namespace {

const std::string RANKS = "23456789TJQKA";
const std::string SUITS = "CDHS";

// A card's rank strength: 0 for a two .. 12 for an ace.
int strength(const Card& card) { return int(RANKS.find(card.at(0))); }
int suit_index(const Card& card) { return int(SUITS.find(card.at(1))); }

// Lower by rank, clubs < diamonds < hearts < spades breaking ties.
bool lower(const Card& a, const Card& b) {
    return std::make_pair(strength(a), suit_index(a)) < std::make_pair(strength(b), suit_index(b));
}

}  // namespace

class LowBot : public bidel::Bot {
public:
    std::string name() const override { return "low-cpp"; }

    // Pass the highest `count` cards.
    std::vector<Card> pass(const View& view, int count) override {
        std::vector<Card> ranked = view.hand;
        std::sort(ranked.begin(), ranked.end(), [](const Card& a, const Card& b) { return lower(b, a); });
        ranked.resize(std::min(ranked.size(), std::size_t(std::max(count, 0))));
        return ranked;
    }

    // Play the lowest legal card.
    Card play(const View& view) override {
        if (view.legal.empty()) throw std::runtime_error("nothing legal to play");
        return *std::min_element(view.legal.begin(), view.legal.end(), lower);
    }

    // Hokm: the suit held most of (ties go to the later letter of C D H S).
    std::string trump(const View& view) override {
        char best = 'C';
        long best_count = -1;
        for (char suit : SUITS) {
            long n = std::count_if(view.hand.begin(), view.hand.end(),
                                   [suit](const Card& c) { return c.size() > 1 && c[1] == suit; });
            if (n >= best_count) best = suit, best_count = n;
        }
        return std::string(1, best);
    }

    // After shooting the moon: whichever leaves this bot furthest ahead of the best other total.
    std::string moon(const View& view) override {
        int amount = view.settings.moon_amount;
        int mine = view.totals.at(view.seat);
        std::vector<int> others;
        for (std::size_t s = 0; s < view.totals.size(); ++s)
            if (int(s) != view.seat) others.push_back(view.totals[s]);
        if (others.empty()) throw std::runtime_error("no other seat");
        int best_other = *std::min_element(others.begin(), others.end());
        int add_margin = best_other + amount - mine;
        int subtract_margin = best_other - (mine - amount);
        return add_margin > subtract_margin ? "add" : "subtract";
    }
};

int main() {
    LowBot bot;
    return bidel::run(bot);
}
