package dev.prodsim.reference;

/** Parses one request line and runs it on the session. */
final class Commands {
    /** Upper bound on records per batch, to keep a typo from exhausting the heap. */
    private static final int MAX_COUNT = 1_000_000;

    private Commands() {}

    static String execute(Session session, String line) {
        String[] words = line.trim().split("\\s+");
        try {
            return run(session, words);
        } catch (Malformed e) {
            return "bad " + e.getMessage();
        } catch (Session.NoLogException e) {
            return "bad " + e.getMessage();
        } catch (RuntimeException | Error e) {
            e.printStackTrace();
            return "crash " + e.getClass().getName() + ": " + oneLine(e.getMessage());
        } finally {
            try {
                session.runPendingTasks();
            } catch (RuntimeException e) {
                System.err.println("kafka-reference: scheduled task failed: " + e);
            }
        }
    }

    private static String run(Session session, String[] w) {
        switch (w[0]) {
            case "reset":
                arity(w, 0);
                return session.reset();
            case "append":
                arity(w, 4);
                return session.append(longArg(w[1], "PID"), epochArg(w[2]), intArg(w[3], "SEQ"), countArg(w[4]));
            case "append-plain":
                arity(w, 1);
                return session.append(PartitionLog.Batch.NO_PRODUCER_ID, (short) -1, -1, countArg(w[1]));
            case "replicate":
                arity(w, 4);
                return session.replicate(longArg(w[1], "PID"), epochArg(w[2]), intArg(w[3], "SEQ"), countArg(w[4]));
            case "truncate":
                arity(w, 1);
                return session.truncate(nonNegative(longArg(w[1], "OFFSET"), "OFFSET"));
            case "restart":
                arity(w, 1);
                if (!w[1].equals("clean") && !w[1].equals("crash")) {
                    throw new Malformed("restart takes clean or crash, got " + w[1]);
                }
                return session.restart(w[1].equals("clean"));
            case "advance":
                arity(w, 1);
                return session.advance(nonNegative(longArg(w[1], "MS"), "MS"));
            case "expire":
                arity(w, 0);
                return session.expire();
            case "state":
                arity(w, 0);
                return session.state();
            case "end":
                arity(w, 0);
                return session.end();
            case "version":
                arity(w, 0);
                return session.version();
            case "":
                throw new Malformed("empty request");
            default:
                throw new Malformed("unknown command " + w[0]);
        }
    }

    private static void arity(String[] w, int n) {
        if (w.length != n + 1) {
            throw new Malformed(w[0] + " takes " + n + " argument" + (n == 1 ? "" : "s") + ", got " + (w.length - 1));
        }
    }

    private static long longArg(String s, String name) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new Malformed(name + " is not a long: " + s);
        }
    }

    private static int intArg(String s, String name) {
        try {
            return Integer.parseInt(s);
        } catch (NumberFormatException e) {
            throw new Malformed(name + " is not an int: " + s);
        }
    }

    private static short epochArg(String s) {
        try {
            return Short.parseShort(s);
        } catch (NumberFormatException e) {
            throw new Malformed("EPOCH is not a short: " + s);
        }
    }

    private static int countArg(String s) {
        int count = intArg(s, "COUNT");
        if (count < 1 || count > MAX_COUNT) {
            throw new Malformed("COUNT must be 1.." + MAX_COUNT + ", got " + s);
        }
        return count;
    }

    private static long nonNegative(long value, String name) {
        if (value < 0) {
            throw new Malformed(name + " must not be negative, got " + value);
        }
        return value;
    }

    private static String oneLine(String message) {
        return message == null ? "" : message.replaceAll("[\\r\\n]+", " ");
    }

    /** A request the protocol does not allow: answered "bad REASON". */
    private static final class Malformed extends RuntimeException {
        Malformed(String reason) {
            super(reason);
        }
    }
}
