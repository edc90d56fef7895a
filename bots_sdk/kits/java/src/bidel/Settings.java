package bidel;

import java.util.Map;

/**
 * The rules resolved, from {@code hello}'s {@code settings}: the numbers a bot needs most,
 * plus every key as sent ({@code all}, e.g. {@code all.get("heart_points")}).
 */
public record Settings(String preset, int players, int passCount, int handSize, int deckSize,
                       int moonAmount, boolean hokm, Map<String, Object> all) {

    /** From hello's {@code settings} (may be null), falling back on a rules object's keys. */
    static Settings from(Object settings, Object rules) {
        Map<String, Object> s = Values.map(settings);
        Map<String, Object> r = Values.map(rules);
        Map<String, Object> all = s.isEmpty() ? r : s;
        String preset = Values.str(all.get("preset"), rules instanceof String p ? p : null);
        return new Settings(
                preset,
                Values.integer(all.get("players"), 4),
                Values.integer(all.get("pass_count"), 3),
                Values.integer(all.get("hand_size"), 13),
                Values.integer(all.get("deck_size"), 52),
                Values.integer(all.get("moon_amount"), 26),
                Boolean.TRUE.equals(all.get("hokm")),
                all);
    }
}
