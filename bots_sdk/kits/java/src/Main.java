import bidel.Runner;

/** Starts the bot. Nothing to change here but the bot's class. */
public class Main {
    public static void main(String[] args) {
        Runner.run(new MyBot());
    }
}
