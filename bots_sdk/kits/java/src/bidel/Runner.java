package bidel;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Speaks the Bidel bot protocol (docs/protocol.md) on stdin/stdout and calls the bot: one
 * JSON object per line in, one reply per {@code hello} and {@code act} out, nothing else.
 */
public final class Runner {
    private final Bot bot;
    private final OutputStream out;
    private Game game = new Game(0, 0, "standard", Settings.from(null, null));

    private Runner(Bot bot, OutputStream out) {
        this.bot = bot;
        this.out = out;
    }

    /** Plays until {@code bye} or the end of input (exit 0), or until the bot throws (exit 1). */
    public static void run(Bot bot) {
        // stdout is the protocol's: keep the real one, send any stray System.out to stderr.
        OutputStream out = new FileOutputStream(FileDescriptor.out);
        System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.err), true,
                                      StandardCharsets.UTF_8));
        Runner runner = new Runner(bot, out);
        int status;
        try {
            status = runner.loop();
        } catch (IOException e) {
            System.err.println("bidel: i/o error: " + e);
            status = 1;
        }
        System.exit(status);
    }

    private int loop() throws IOException {
        BufferedReader in = new BufferedReader(
                new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 16);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            Map<String, Object> message;
            try {
                message = Values.map(Json.parse(line));
            } catch (Json.ParseException e) {
                System.err.println("bidel: ignoring a line that is not JSON: " + e.getMessage());
                continue;
            }
            String type = Values.str(message.get("type"), "");
            if (type.equals("bye")) {
                return 0;
            }
            try {
                handle(type, message);
            } catch (Throwable e) { // the bot's code (or something it caused) failed
                e.printStackTrace();
                boolean memory = e instanceof OutOfMemoryError;
                sendError(memory ? "memory" : "crash", describe(e));
                return 1;
            }
        }
        return 0; // end of input
    }

    private void handle(String type, Map<String, Object> message) throws IOException {
        switch (type) {
            case "hello" -> {
                Object rules = message.get("rules");
                game = new Game(Values.integer(message.get("seat"), 0),
                                message.get("seed") instanceof Number n ? n.longValue() : 0L,
                                rules, Settings.from(message.get("settings"), rules));
                bot.game = game;
                bot.rng = new Random(game.seed());
                bot.start(game);
                String name = String.valueOf(bot.name());
                if (name.codePointCount(0, name.length()) > 64) {
                    name = name.substring(0, name.offsetByCodePoints(0, 64));
                }
                Map<String, Object> ready = new LinkedHashMap<>();
                ready.put("type", "ready");
                ready.put("name", name);
                send(ready);
            }
            case "act" -> {
                Object id = message.get("id");
                View view = new View(Values.map(message.get("view")));
                String decision = Values.str(message.get("decision"), view.decision);
                Object action = decide(decision, message, view);
                Map<String, Object> reply = new LinkedHashMap<>();
                reply.put("type", "action");
                reply.put("id", id instanceof Number n ? (Object) n.longValue() : id);
                reply.put("action", action);
                send(reply);
            }
            case "hand_end" -> bot.handEnd(new View(Values.map(message.get("view"))));
            case "game_end" -> bot.gameEnd(new View(Values.map(message.get("view"))));
            default -> System.err.println("bidel: ignoring a message of type '" + type + "'");
        }
    }

    private Object decide(String decision, Map<String, Object> message, View view) {
        Object action;
        switch (decision) {
            case "pass" -> {
                int count = Values.integer(message.get("count"), game.settings().passCount());
                List<String> cards = bot.pass(view, count);
                action = cards == null ? null : List.copyOf(cards);
            }
            case "play" -> action = bot.play(view);
            case "trump" -> action = bot.trump(view);
            case "moon" -> action = bot.moon(view);
            default -> {
                // A decision this kit does not know yet: take the first legal action.
                System.err.println("bidel: unknown decision '" + decision + "', answering "
                                   + "the first legal action");
                action = view.legal.isEmpty() ? "" : view.legal.get(0);
            }
        }
        if (action == null) {
            throw new IllegalStateException("the bot's " + decision + " returned null");
        }
        return action;
    }

    private void send(Map<String, Object> message) throws IOException {
        out.write((Json.write(message) + "\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    private void sendError(String kind, String detail) {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("type", "error");
        error.put("class", kind);
        error.put("detail", detail);
        try {
            send(error);
        } catch (IOException e) {
            System.err.println("bidel: could not send the error: " + e);
        }
    }

    /** The exception and where it happened, short enough for a protocol line. */
    private static String describe(Throwable e) {
        StackTraceElement[] at = e.getStackTrace();
        String text = e + (at.length > 0 ? " at " + at[0] : "");
        return text.length() > 1000 ? text.substring(0, 1000) : text;
    }
}
