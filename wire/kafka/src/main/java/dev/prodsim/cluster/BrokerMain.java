package dev.prodsim.cluster;

import java.io.IOException;
import java.io.InputStream;

/**
 * A broker's JVM: kafka.Kafka server.properties, plus one daemon thread that
 * reads stdin, a pipe from the supervisor that nobody writes to, and halts
 * the JVM at its end of file. So when the supervisor dies, even by kill -9
 * (where its shutdown hook does not run), its brokers die with it.
 */
public final class BrokerMain {
  private BrokerMain() {}

  public static void main(String[] args) throws Exception {
    Thread watch = new Thread(() -> {
      InputStream in = System.in;
      byte[] b = new byte[256];
      try {
        while (in.read(b) >= 0) {
          // nothing is ever written; wait for the end of file
        }
      } catch (IOException e) {
        // the same: the supervisor is gone
      }
      System.err.println("prodsim: the supervisor's pipe closed; halting");
      Runtime.getRuntime().halt(137);
    }, "prodsim-supervisor-watch");
    watch.setDaemon(true);
    watch.start();
    kafka.Kafka.main(args);
  }
}
