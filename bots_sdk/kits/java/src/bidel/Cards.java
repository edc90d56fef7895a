package bidel;

import java.util.Comparator;

/** Card helpers. A card is its two-character text: rank then suit, e.g. "2C", "TD", "AS". */
public final class Cards {
    public static final String RANKS = "23456789TJQKA";
    public static final String SUITS = "CDHS";

    /** Lowest first: by rank, then clubs, diamonds, hearts, spades. */
    public static final Comparator<String> LOW_FIRST =
            Comparator.comparingInt(Cards::strength).thenComparingInt(Cards::suitIndex);

    private Cards() {}

    /** 0 for a two .. 12 for an ace. */
    public static int strength(String card) {
        return RANKS.indexOf(card.charAt(0));
    }

    /** 'C', 'D', 'H' or 'S'. */
    public static char suit(String card) {
        return card.charAt(1);
    }

    /** 0 for clubs .. 3 for spades. */
    public static int suitIndex(String card) {
        return SUITS.indexOf(card.charAt(1));
    }
}
