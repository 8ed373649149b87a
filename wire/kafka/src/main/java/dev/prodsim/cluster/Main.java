package dev.prodsim.cluster;

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * kafka-cluster: starts a real Kafka cluster on loopback and serves the line
 * protocol of README.md: stdout carries only the protocol (everything else,
 * Kafka's log included, goes to stderr or to files under DIR), stdin the
 * commands.
 */
public final class Main {
  private static final String EOF = new String("<eof>"); // compared by identity

  private Main() {}

  public static void main(String[] argv) throws Exception {
    PrintStream proto = new PrintStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16),
        false, StandardCharsets.UTF_8);
    System.setOut(System.err);

    Args args;
    try {
      args = Args.parse(argv);
    } catch (Args.UsageException e) {
      answer(proto, List.of("error " + Cluster.oneLine(e.getMessage())));
      System.err.println(Args.USAGE);
      System.exit(2);
      return;
    }

    long t0 = System.nanoTime();
    Cluster cluster;
    try {
      cluster = new Cluster(args);
    } catch (Exception e) {
      answer(proto, List.of("error " + Cluster.oneLine(Cluster.reason(e))));
      System.exit(1);
      return;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(cluster::emergencyStop, "prodsim-cluster-shutdown"));

    // stdin from the start: its end while the cluster is starting is an exit
    // too (the shutdown hook kills the brokers and removes DIR).
    BlockingQueue<String> commands = new LinkedBlockingQueue<>();
    Object startLock = new Object();
    boolean[] started = {false};
    Thread reader = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
        String line;
        while ((line = in.readLine()) != null) commands.add(line);
      } catch (IOException e) {
        System.err.println("prodsim: stdin: " + e);
      }
      synchronized (startLock) {
        if (!started[0]) {
          System.err.println("prodsim: end of stdin before the cluster was ready; exiting");
          System.exit(1);
        }
      }
      commands.add(EOF);
    }, "prodsim-stdin");
    reader.setDaemon(true);
    reader.start();

    try {
      cluster.start();
    } catch (Throwable e) {
      answer(proto, List.of("error " + Cluster.oneLine(Cluster.reason(e))));
      cluster.printTails(40);
      System.exit(1);
      return;
    }
    synchronized (startLock) {
      started[0] = true;
    }
    System.err.printf("prodsim: %s cluster of %d brokers ready in %d ms%n", Cluster.mode(), args.brokers,
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
    proto.println("ready");
    for (Broker b : cluster.brokers()) proto.println("broker " + b.id + " 127.0.0.1:" + b.clientPort);
    proto.println("end");
    proto.flush();

    while (true) {
      String line = commands.take();
      if (line == EOF || line.trim().equals("quit")) break;
      if (line.isBlank()) continue;
      long c0 = System.nanoTime();
      List<String> reply = cluster.handle(line);
      System.err.printf("prodsim: %s -> %s (%d ms)%n", line.trim(), reply.get(0),
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - c0));
      answer(proto, reply);
    }
    cluster.quit();
    answer(proto, List.of("ok"));
    System.exit(0);
  }

  private static void answer(PrintStream proto, List<String> lines) {
    for (String l : lines) proto.println(l);
    proto.flush();
  }
}
