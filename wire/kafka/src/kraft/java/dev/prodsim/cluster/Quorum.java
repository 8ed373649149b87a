package dev.prodsim.cluster;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.StringJoiner;
import java.util.function.IntSupplier;
import org.apache.kafka.common.Uuid;

/**
 * Kafka 3.x/4.x in KRaft, with a static voter set (controller.quorum.voters)
 * on a CONTROLLER listener on 127.0.0.1, and every node's storage formatted
 * with Kafka's own StorageTool (kafka.tools.StorageTool format, in this JVM)
 * before its first start. Two layouts:
 *
 * <ul>
 *   <li>separate (the default): one dedicated controller process
 *       (process.roles=controller, node id 1000, DIR/controller), a quorum of
 *       one; the brokers are brokers only, so that crash/pause/stop of a
 *       broker never touches the controller (as with ZooKeeper 2.x, whose
 *       quorum is not a broker either).
 *   <li>combined (--controllers combined): every broker is a controller too
 *       (process.roles=broker,controller), the quorum the N brokers; a fault
 *       on a broker is then also one on a voter, maybe the active controller.
 * </ul>
 */
final class Quorum {
  static final String MODE = "kraft";
  static final int CONTROLLER_ID = 1000;
  /** Kafka's broker.session.timeout.ms default (9 s). */
  private static final int DEFAULT_SESSION_MS = 9_000;

  private final int sessionMs; // -1: the broker's default
  private final String clusterId = Uuid.randomUuid().toString();
  private final Broker controller; // null when combined

  Quorum(Path clusterDir, Args args, IntSupplier freePort) {
    this.sessionMs = args.zkSessionMs;
    this.controller = args.combinedControllers
        ? null : new Broker("controller", CONTROLLER_ID, -1, -1, freePort.getAsInt(), -1, clusterDir);
  }

  boolean needsControllerPort() {
    return controller == null;
  }

  /** The processes of the quorum that are not brokers. */
  List<Broker> nodes() {
    return controller == null ? List.of() : List.of(controller);
  }

  /** Throws if the dedicated controller has exited. */
  void check() throws Cluster.CommandException {
    if (controller != null && !controller.running()) {
      throw new Cluster.CommandException("the controller exited (code " + controller.exitCode() + "); see "
          + controller.log);
    }
  }

  /** How long the controller takes to fence a broker that died (broker.session.timeout.ms). */
  long failureDetectionMs() {
    return sessionMs > 0 ? sessionMs : DEFAULT_SESSION_MS;
  }

  /** The dedicated controller: configured, formatted and started (the brokers do not wait for it). */
  void start(List<Broker> brokers, Properties common, Cluster.Launcher javaCommand) throws IOException {
    if (controller == null) return;
    Properties p = new Properties();
    p.putAll(common);
    p.setProperty("node.id", Integer.toString(CONTROLLER_ID));
    p.setProperty("process.roles", "controller");
    p.setProperty("listeners", "CONTROLLER://127.0.0.1:" + controller.controllerPort);
    p.setProperty("listener.security.protocol.map", "CONTROLLER:PLAINTEXT");
    p.setProperty("controller.listener.names", "CONTROLLER");
    p.setProperty("controller.quorum.voters", voters(brokers));
    p.setProperty("log.dirs", controller.dataDir().toString());
    session(p);
    Files.createDirectories(controller.dataDir());
    Cluster.write(p, controller);
    format(controller);
    controller.start(javaCommand);
  }

  private String voters(List<Broker> brokers) {
    if (controller != null) return CONTROLLER_ID + "@127.0.0.1:" + controller.controllerPort;
    StringJoiner voters = new StringJoiner(",");
    for (Broker o : brokers) voters.add(o.id + "@127.0.0.1:" + o.controllerPort);
    return voters.toString();
  }

  /**
   * --zk-session-ms in KRaft: how long a broker may miss heartbeats before
   * the controller fences it (the counterpart of ZooKeeper's session; the
   * controller reads it), with heartbeats at a third of it (at most 2 s, the
   * default; the brokers read that).
   */
  private void session(Properties p) {
    if (sessionMs > 0) {
      p.setProperty("broker.session.timeout.ms", Integer.toString(sessionMs));
      p.setProperty("broker.heartbeat.interval.ms", Integer.toString(Math.max(50, Math.min(2000, sessionMs / 3))));
    }
  }

  void configure(Broker b, List<Broker> all, Properties p) {
    p.setProperty("node.id", Integer.toString(b.id));
    p.setProperty("controller.listener.names", "CONTROLLER");
    p.setProperty("listener.security.protocol.map", p.getProperty("listener.security.protocol.map")
        + ",CONTROLLER:PLAINTEXT");
    p.setProperty("controller.quorum.voters", voters(all));
    if (controller == null) {
      p.setProperty("process.roles", "broker,controller");
      p.setProperty("listeners", p.getProperty("listeners") + ",CONTROLLER://127.0.0.1:" + b.controllerPort);
    } else {
      p.setProperty("process.roles", "broker");
      // Read by the controller only (Kafka warns when a broker has them).
      p.remove("num.partitions");
      p.remove("default.replication.factor");
    }
    session(p);
  }

  /** kafka-storage.sh format -t CLUSTER_ID -c server.properties, in this JVM. */
  void format(Broker b) {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    int rc;
    try (PrintStream ps = new PrintStream(buf, true, StandardCharsets.UTF_8)) {
      rc = kafka.tools.StorageTool.execute(
          new String[] {"format", "-t", clusterId, "-c", b.properties.toString()}, ps);
    }
    String out = buf.toString(StandardCharsets.UTF_8).strip();
    if (rc != 0) {
      throw new IllegalStateException("kafka-storage format of " + b.dir.getFileName() + " failed: " + out);
    }
  }

  /** A KRaft broker that restarts registers again at once (a new incarnation). */
  void awaitDeregistered(int id, long deadlineNanos) {}

  boolean registered(int id) {
    return true; // the caller's Metadata probe decides
  }

  /** Null: the ISR comes from the brokers' Metadata answers (the controller pushes changes to every broker at once). */
  List<Integer> isr(String topic, int partition) {
    return null;
  }

  /** After the brokers: the controller's clean stop, SIGKILL after 5 s. */
  void close() {
    if (controller != null) controller.stop(5_000);
  }

  void destroyNow() {
    if (controller != null) {
      controller.destroyNow();
      controller.waitExit(5_000);
    }
  }
}
