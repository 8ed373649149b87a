package dev.prodsim.reference;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * The line protocol (README.md): one request line on stdin, one response line
 * on stdout, flushed. Nothing else may reach stdout: System.out is pointed at
 * stderr before Kafka's classes load.
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws IOException {
        PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        Session session = new Session();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> quietly(session::discard)));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.trim().equals("quit")) {
                break;
            }
            protocol.println(Commands.execute(session, line));
            protocol.flush();
        }
        quietly(session::discard);
        protocol.flush();
        // Kafka may have left non-daemon threads (metrics): end the JVM here.
        Runtime.getRuntime().halt(0);
    }

    private static void quietly(Runnable action) {
        try {
            action.run();
        } catch (RuntimeException e) {
            System.err.println("kafka-reference: while closing: " + e);
        }
    }
}
