package dev.prodsim.cluster;

import java.io.File;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.function.IntSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.server.DataNode;
import org.apache.zookeeper.server.ServerCnxnFactory;
import org.apache.zookeeper.server.ZooKeeperServer;

/**
 * Kafka 2.x: the brokers' metadata in ZooKeeper, one standalone ZooKeeper
 * server inside the supervisor's JVM on 127.0.0.1 (its data under
 * DIR/zookeeper), the controller one of the brokers (elected through it).
 */
final class Quorum {
  static final String MODE = "zookeeper";
  /** Kafka's zookeeper.session.timeout.ms default in 2.x (18 s). */
  private static final int DEFAULT_SESSION_MS = 18_000;
  private static final int TICK_MS = 250;

  private final Path dir;
  private final int port;
  private final int sessionMs; // -1: the broker's default
  private ZooKeeperServer server;
  private ServerCnxnFactory factory;

  Quorum(Path clusterDir, Args args, IntSupplier freePort) {
    this.dir = clusterDir.resolve("zookeeper");
    this.port = freePort.getAsInt();
    this.sessionMs = args.zkSessionMs;
  }

  boolean needsControllerPort() {
    return false;
  }

  /** How long the cluster takes to notice a broker that died (its ZooKeeper session). */
  long failureDetectionMs() {
    return sessionMs > 0 ? sessionMs : DEFAULT_SESSION_MS;
  }

  /** No process of its own: ZooKeeper runs in this JVM. */
  List<Broker> nodes() {
    return List.of();
  }

  void check() {}

  void start(List<Broker> brokers, Properties common, Cluster.Launcher javaCommand) throws Exception {
    // No fsync, and 1 MiB log files instead of 64 MiB (read when the
    // classes load, so before the first ZooKeeper class).
    System.setProperty("zookeeper.forceSync", "no");
    System.setProperty("zookeeper.preAllocSize", "1024");
    System.setProperty("zookeeper.admin.enableServer", "false");
    File data = dir.toFile();
    if (!data.mkdirs() && !data.isDirectory()) throw new IllegalStateException("cannot create " + data);
    server = new ZooKeeperServer(data, data, TICK_MS);
    server.setMinSessionTimeout(2 * TICK_MS);
    server.setMaxSessionTimeout(Math.max(60_000, 2 * (int) failureDetectionMs()));
    factory = ServerCnxnFactory.createFactory(new InetSocketAddress("127.0.0.1", port), 200);
    factory.startup(server);
  }

  void configure(Broker b, List<Broker> all, Properties p) {
    p.setProperty("broker.id", Integer.toString(b.id));
    p.setProperty("zookeeper.connect", "127.0.0.1:" + port);
    p.setProperty("zookeeper.connection.timeout.ms", "30000");
    if (sessionMs > 0) p.setProperty("zookeeper.session.timeout.ms", Integer.toString(sessionMs));
    // A clean stop retries the controlled shutdown after 5 s by default.
    p.setProperty("controlled.shutdown.retry.backoff.ms", "500");
  }

  /** Nothing to format with ZooKeeper. */
  void format(Broker b) {}

  /**
   * Before a restart: a broker that was killed keeps its registration
   * (/brokers/ids/ID, an ephemeral znode) until its ZooKeeper session
   * expires, and a broker that starts while it is there fails to register
   * and exits. So wait for it to go, as a real operator's restart would.
   */
  void awaitDeregistered(int id, long deadlineNanos) throws Exception {
    String path = "/brokers/ids/" + id;
    while (server.getZKDatabase().getNode(path) != null) {
      if (System.nanoTime() - deadlineNanos > 0) {
        throw new IllegalStateException("broker " + id + " is still registered in ZooKeeper (" + path + ")");
      }
      Thread.sleep(100);
    }
  }

  /** True once /brokers/ids/ID exists. */
  boolean registered(int id) {
    return server.getZKDatabase().getNode("/brokers/ids/" + id) != null;
  }

  private static final Pattern ISR = Pattern.compile("\"isr\"\\s*:\\s*\\[([0-9,\\s]*)\\]");

  /**
   * The partition's ISR as the controller and the leader see it
   * (/brokers/topics/T/partitions/P/state), which the brokers' metadata
   * caches (and so clients, and `leaders`) learn only seconds later in 2.x
   * (a leader propagates its ISR changes at most every 5 s); null if unknown.
   */
  List<Integer> isr(String topic, int partition) {
    String path = "/brokers/topics/" + topic + "/partitions/" + partition + "/state";
    DataNode node = server.getZKDatabase().getNode(path);
    if (node == null) return null;
    byte[] data;
    try {
      data = server.getZKDatabase().getData(path, new Stat(), null);
    } catch (Exception e) {
      return null;
    }
    if (data == null) return null;
    Matcher m = ISR.matcher(new String(data, StandardCharsets.UTF_8));
    if (!m.find()) return null;
    List<Integer> isr = new ArrayList<>();
    for (String s : m.group(1).split(",")) {
      if (!s.isBlank()) isr.add(Integer.parseInt(s.trim()));
    }
    return isr;
  }

  void destroyNow() {
    close();
  }

  void close() {
    try {
      if (factory != null) factory.shutdown();
      if (server != null) server.shutdown();
    } catch (RuntimeException e) {
      System.err.println("prodsim: ZooKeeper shutdown: " + e);
    }
    factory = null;
    server = null;
  }
}
