package bidel;

/**
 * What {@code hello} says about this match: this bot's seat, the seed for its random numbers
 * (a re-run of the same match then plays the same game), the rules spec as sent (a preset
 * name or an object) and the rules resolved.
 */
public record Game(int seat, long seed, Object rules, Settings settings) {}
