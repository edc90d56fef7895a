package bidel;

import java.util.List;
import java.util.Random;

/**
 * Extend me (see MyBot) and hand an instance to {@link Runner#run}. The runner fills in
 * {@link #game} and {@link #rng} before the first decision. Use {@code rng} (seeded by the
 * referee), never an unseeded Random: a re-run of the same match then plays the same game.
 * Write logs to System.err; stdout belongs to the protocol (the runner sends System.out to
 * stderr anyway).
 */
public abstract class Bot {
    /** This match: seat, seed, rules, settings. Set before {@link #start}. */
    protected Game game;
    /** Seeded with the match's seed. */
    protected Random rng = new Random(0);

    /** Shown in tables and logs, at most 64 characters. Default: the class name. */
    public String name() {
        return getClass().getSimpleName();
    }

    /** Called once after hello, before any decision ({@link #game} is set). */
    public void start(Game game) {}

    /** The {@code count} cards to give away, from {@code view.hand}. */
    public abstract List<String> pass(View view, int count);

    /** The card to play: one of {@code view.legal}. */
    public abstract String play(View view);

    /** Hokm, when this bot is the hakem: the trump suit, one of "C", "D", "H", "S". */
    public abstract String trump(View view);

    /** After shooting the moon under moon = "choice": "add" or "subtract". */
    public abstract String moon(View view);

    /** A hand is over: {@code view.scores} holds what it added to each total. */
    public void handEnd(View view) {}

    /** The game is over. */
    public void gameEnd(View view) {}
}
