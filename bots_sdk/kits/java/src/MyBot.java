import bidel.Bot;
import bidel.Cards;
import bidel.View;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * YOUR STRATEGY GOES HERE.
 *
 * <p>This starter plays exactly like the referee's built-in {@code low} bot: it passes its
 * highest cards and always plays its lowest legal card. Change the four decisions below.
 * {@code game} (seat, seed, settings) and {@code rng} (seeded) come from {@link Bot}.
 */
public class MyBot extends Bot {

    @Override
    public String name() {
        return "java-low";
    }

    /** Pass the {@code count} highest cards (by rank, then spades, hearts, diamonds, clubs). */
    @Override
    public List<String> pass(View view, int count) {
        List<String> hand = new ArrayList<>(view.hand);
        hand.sort(Cards.LOW_FIRST.reversed());
        return hand.subList(0, count);
    }

    /** Play the lowest legal card (by rank, then clubs, diamonds, hearts, spades). */
    @Override
    public String play(View view) {
        return Collections.min(view.legal, Cards.LOW_FIRST);
    }

    /** Hokm, as hakem: the suit held most of (a tie goes to the later of C, D, H, S). */
    @Override
    public String trump(View view) {
        char best = 'C';
        int bestCount = -1;
        for (char suit : Cards.SUITS.toCharArray()) {
            int count = 0;
            for (String card : view.hand) {
                if (Cards.suit(card) == suit) {
                    count++;
                }
            }
            if (count >= bestCount) {
                best = suit;
                bestCount = count;
            }
        }
        return String.valueOf(best);
    }

    /** After shooting the moon: whichever leaves this bot furthest ahead of the best other. */
    @Override
    public String moon(View view) {
        int amount = game.settings().moonAmount();
        int mine = view.totals.get(view.seat);
        int bestOther = Integer.MAX_VALUE;
        for (int s = 0; s < view.totals.size(); s++) {
            if (s != view.seat) {
                bestOther = Math.min(bestOther, view.totals.get(s));
            }
        }
        int addMargin = bestOther + amount - mine;
        int subtractMargin = bestOther - (mine - amount);
        return addMargin > subtractMargin ? "add" : "subtract";
    }

    /** Optional: called at the end of each hand ({@code view.scores}: what it added). */
    @Override
    public void handEnd(View view) {
        System.err.println("hand " + view.handNumber + " scores " + view.scores);
    }
}
