package bidel;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * What this bot sees when asked to decide (and at a hand's and the game's end). The fields
 * are the protocol's view (docs/protocol.md), with Java names; nullable ones are boxed types
 * and may be null. Lists are read-only: copy one to sort it. Cards are texts like "2C", "TD".
 */
public final class View {
    /** One card played: by which seat. */
    public record Play(int seat, String card) {}

    /** A completed trick; {@code winner} is null when Cancellation cancelled everything. */
    public record Trick(int leader, List<Play> plays, Integer winner) {}

    public final int seat;
    /** The rules spec: a preset name (String) or an object (Map). See also {@link Settings}. */
    public final Object rules;
    public final List<String> hand;
    /** The actions allowed now: cards, or suit letters for trump, or "add"/"subtract". */
    public final List<String> legal;
    /** "pass", "play", "trump", "moon", or "none" at hand_end / game_end. */
    public final String decision;
    /** The current trick so far, in play order. */
    public final List<Play> trick;
    /** This hand's completed tricks. */
    public final List<Trick> tricks;
    public final List<Integer> pointsTaken;
    public final List<Integer> totals;
    /** "left", "right", "across" or "hold". */
    public final String passDirection;
    /** Passed cards go to seat (seat + passOffset) % players; 0 on a hold hand. */
    public final int passOffset;
    public final List<String> passed;
    public final List<String> received;
    public final boolean heartsBroken;
    /** Hokm: the trump suit letter, or null. */
    public final String trump;
    /** Hokm: the hakem's seat, or null. */
    public final Integer hakem;
    public final int handNumber;
    public final List<Integer> cardsLeft;
    public final int kittySize;
    public final Integer kittyTaker;
    /** At a hand's end: what it added to each total; otherwise null. */
    public final List<Integer> scores;
    /** Seconds this move may take (move limit plus what is left of the bank), or null. */
    public final Double timeLeft;
    /** The seat that leads the current trick, or null outside play. */
    public final Integer leader;
    public final List<String> kitty;
    /** The view as sent, every key included (newer ones too). */
    public final Map<String, Object> raw;

    /** A view from its parsed JSON object; missing keys get empty / zero / null values. */
    public View(Map<String, Object> v) {
        raw = Collections.unmodifiableMap(v);
        seat = Values.integer(v.get("seat"), 0);
        rules = v.get("rules");
        hand = Values.strings(v.get("hand"));
        legal = Values.strings(v.get("legal"));
        decision = Values.str(v.get("decision"), "none");
        trick = plays(v.get("trick"));
        List<Trick> done = new ArrayList<>();
        for (Object t : Values.list(v.get("tricks"))) {
            Map<String, Object> m = Values.map(t);
            done.add(new Trick(Values.integer(m.get("leader"), 0), plays(m.get("plays")),
                               Values.nullableInt(m.get("winner"))));
        }
        tricks = Collections.unmodifiableList(done);
        pointsTaken = Values.ints(v.get("points_taken"));
        totals = Values.ints(v.get("totals"));
        passDirection = Values.str(v.get("pass_direction"), "hold");
        passOffset = Values.integer(v.get("pass_offset"), 0);
        passed = Values.strings(v.get("passed"));
        received = Values.strings(v.get("received"));
        heartsBroken = Boolean.TRUE.equals(v.get("hearts_broken"));
        trump = Values.str(v.get("trump"), null);
        hakem = Values.nullableInt(v.get("hakem"));
        handNumber = Values.integer(v.get("hand_number"), 0);
        cardsLeft = Values.ints(v.get("cards_left"));
        kittySize = Values.integer(v.get("kitty_size"), 0);
        kittyTaker = Values.nullableInt(v.get("kitty_taker"));
        scores = v.get("scores") instanceof List<?> s ? Values.ints(s) : null;
        timeLeft = Values.nullableDouble(v.get("time_left"));
        leader = Values.nullableInt(v.get("leader"));
        kitty = Values.strings(v.get("kitty"));
    }

    private static List<Play> plays(Object v) {
        List<Play> out = new ArrayList<>();
        for (Object p : Values.list(v)) {
            List<?> pair = Values.list(p);
            if (pair.size() == 2 && pair.get(1) instanceof String card) {
                out.add(new Play(Values.integer(pair.get(0), 0), card));
            }
        }
        return Collections.unmodifiableList(out);
    }
}
