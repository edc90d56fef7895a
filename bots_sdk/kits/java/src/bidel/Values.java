package bidel;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/** Lenient conversions from parsed JSON values: a missing or odd value gets the default. */
final class Values {
    private Values() {}

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object v) {
        return v instanceof Map<?, ?> m ? (Map<String, Object>) m : Collections.emptyMap();
    }

    static List<?> list(Object v) {
        return v instanceof List<?> l ? l : Collections.emptyList();
    }

    static String str(Object v, String otherwise) {
        return v instanceof String s ? s : otherwise;
    }

    static int integer(Object v, int otherwise) {
        return v instanceof Number n ? n.intValue() : otherwise;
    }

    /** An integer, or null for null / missing. */
    static Integer nullableInt(Object v) {
        return v instanceof Number n ? n.intValue() : null;
    }

    static Double nullableDouble(Object v) {
        return v instanceof Number n ? n.doubleValue() : null;
    }

    static List<String> strings(Object v) {
        List<String> out = new ArrayList<>();
        for (Object item : list(v)) {
            if (item instanceof String s) {
                out.add(s);
            }
        }
        return Collections.unmodifiableList(out);
    }

    static List<Integer> ints(Object v) {
        List<Integer> out = new ArrayList<>();
        for (Object item : list(v)) {
            out.add(integer(item, 0));
        }
        return Collections.unmodifiableList(out);
    }
}
