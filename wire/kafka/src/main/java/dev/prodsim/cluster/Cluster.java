package dev.prodsim.cluster;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.StringJoiner;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TopicExistsException;

/**
 * The cluster: N brokers (ids 0..N-1), each its own JVM, their quorum
 * (ZooKeeper inside this JVM for 2.x; KRaft from 3.x on, a dedicated
 * controller JVM or every broker a controller too), one AdminClient on the
 * INTERNAL listeners, and the commands of the protocol (README.md).
 */
final class Cluster {
  /** A command's failure: its message is the `error` line's reason. */
  static final class CommandException extends Exception {
    CommandException(String message) {
      super(message);
    }
  }

  private static final long STOP_BOUND_MS = 60_000;
  private static final long QUIT_STOP_BOUND_MS = 5_000;
  private static final long OP_BOUND_MS = 30_000;
  private static final long POLL_MS = 100;

  private final Args args;
  private final List<Broker> brokers = new ArrayList<>();
  private final Quorum quorum;
  private final Launcher javaCommand;
  private final long defaultLagMs;
  private Admin admin;
  private boolean closed;

  Cluster(Args args) throws IOException {
    this.args = args;
    Path dir = args.dir;
    if (Files.exists(dir)) {
      try (Stream<Path> s = Files.list(dir)) {
        if (s.findAny().isPresent()) throw new IOException("--dir " + dir + " is not empty");
      }
    }
    Files.createDirectories(dir);
    // Every port at once, each held open until all are picked: no two the
    // same. Below the kernel's ephemeral range, so that no outgoing
    // connection (a client's, a broker's) holds a broker's port when the
    // broker starts again after a crash; the ephemeral range if that fails.
    List<ServerSocket> held = new ArrayList<>();
    try {
      int[] range = listenRange();
      java.util.Random random = new java.util.Random();
      java.util.function.IntSupplier freePort = () -> {
        for (int attempt = 0; attempt < 200 && range != null; attempt++) {
          int port = range[0] + random.nextInt(range[1] - range[0] + 1);
          try {
            ServerSocket s = new ServerSocket();
            s.setReuseAddress(false);
            try {
              s.bind(new java.net.InetSocketAddress(InetAddress.getByName("127.0.0.1"), port), 1);
            } catch (IOException e) {
              s.close();
              continue;
            }
            held.add(s);
            return port;
          } catch (IOException e) {
            // try another
          }
        }
        try {
          ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"));
          held.add(s);
          return s.getLocalPort();
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      };
      quorum = new Quorum(dir, args, freePort);
      for (int id = 0; id < args.brokers; id++) {
        int internal = freePort.getAsInt();
        int client = freePort.getAsInt();
        int controller = quorum.needsControllerPort() ? freePort.getAsInt() : -1;
        brokers.add(new Broker(id, internal, client, controller, args.advertise[id], dir));
      }
    } finally {
      for (ServerSocket s : held) s.close();
    }
    defaultLagMs = args.replicaLagMs > 0 ? args.replicaLagMs : 30_000;
    javaCommand = launcher(dir);
  }

  List<Broker> brokers() {
    return brokers;
  }

  /**
   * Ports to listen on: [10000, the low end of
   * /proc/sys/net/ipv4/ip_local_port_range), or null (then the kernel picks).
   */
  private static int[] listenRange() {
    try {
      // One read with a large buffer: a sysctl file answers a read at a
      // non-zero offset with nothing (Files.readString gets "3").
      String line;
      try (java.io.BufferedReader r = Files.newBufferedReader(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))) {
        line = r.readLine();
      }
      String[] f = line.trim().split("\\s+");
      int low = Integer.parseInt(f[0]);
      return low - 1 >= 11_000 ? new int[] {10_000, low - 1} : null;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  static String mode() {
    return Quorum.MODE;
  }

  // ---------------------------------------------------------------- start

  /** Starts everything; returns when the cluster is ready (README.md, "ready"). */
  void start() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(args.startTimeoutMs);
    Files.writeString(args.dir.resolve("log4j-broker.properties"), BROKER_LOG4J, StandardCharsets.UTF_8);
    Files.writeString(args.dir.resolve("log4j2-broker.properties"), BROKER_LOG4J2, StandardCharsets.UTF_8);
    long t0 = System.nanoTime();
    quorum.start(brokers, commonProperties(), javaCommand);
    for (Broker b : brokers) {
      Files.createDirectories(b.dataDir());
      writeProperties(b);
      quorum.format(b);
    }
    for (Broker b : brokers) b.start(javaCommand);
    long t1 = System.nanoTime();
    admin = Admin.create(adminConfig(internalBootstrap()));
    List<Integer> all = brokers.stream().map(b -> b.id).collect(Collectors.toList());
    awaitRegistered(all, deadline);
    long t2 = System.nanoTime();
    createTopics(deadline);
    long t3 = System.nanoTime();
    awaitTopicsReady(deadline);
    System.err.printf("prodsim: started in %d ms: quorum and brokers launched %d ms, registered %d ms,"
        + " topics created %d ms, every broker's view ready %d ms%n", ms(System.nanoTime() - t0), ms(t1 - t0),
        ms(t2 - t1), ms(t3 - t2), ms(System.nanoTime() - t3));
  }

  private static long ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }

  /**
   * The settings every node gets (a dedicated KRaft controller too, since
   * in KRaft the controller applies the cluster-wide defaults and does the
   * leader elections).
   */
  private Properties commonProperties() {
    int n = brokers.size();
    Properties p = new Properties();
    // Small: 2 cores shared by N brokers and the rest of the harness.
    p.setProperty("num.network.threads", "1");
    p.setProperty("num.io.threads", "2");
    p.setProperty("num.replica.fetchers", "1");
    p.setProperty("background.threads", "2");
    p.setProperty("num.recovery.threads.per.data.dir", "1");
    p.setProperty("num.replica.alter.log.dirs.threads", "1");
    p.setProperty("log.cleaner.enable", "false");
    p.setProperty("log.cleaner.threads", "1");
    p.setProperty("log.retention.check.interval.ms", "3600000");
    // Topics only as the supervisor creates them; leaders only where
    // move-leader puts them (no automatic preferred-leader rebalance).
    p.setProperty("auto.create.topics.enable", "false");
    p.setProperty("auto.leader.rebalance.enable", "false");
    p.setProperty("unclean.leader.election.enable", "false");
    p.setProperty("delete.topic.enable", "true");
    p.setProperty("num.partitions", "1");
    p.setProperty("default.replication.factor", Integer.toString(Math.min(3, n)));
    p.setProperty("min.insync.replicas", Integer.toString(args.minInsync));
    // Internal topics: replicated like a production cluster, fewer partitions.
    p.setProperty("group.initial.rebalance.delay.ms", "0");
    p.setProperty("offsets.topic.replication.factor", Integer.toString(Math.min(3, n)));
    p.setProperty("offsets.topic.num.partitions", "3");
    p.setProperty("transaction.state.log.replication.factor", Integer.toString(Math.min(3, n)));
    p.setProperty("transaction.state.log.min.isr", Integer.toString(Math.min(2, n)));
    p.setProperty("transaction.state.log.num.partitions", "3");
    if (args.replicaLagMs > 0) {
      p.setProperty("replica.lag.time.max.ms", Integer.toString(args.replicaLagMs));
      // Kafka requires replica.fetch.wait.max.ms <= replica.lag.time.max.ms.
      p.setProperty("replica.fetch.wait.max.ms", Integer.toString(Math.min(500, Math.max(1, args.replicaLagMs / 2))));
    }
    return p;
  }

  private void writeProperties(Broker b) throws IOException {
    Properties p = commonProperties();
    p.setProperty("listeners", "INTERNAL://127.0.0.1:" + b.internalPort + ",CLIENT://127.0.0.1:" + b.clientPort);
    p.setProperty("advertised.listeners",
        "INTERNAL://127.0.0.1:" + b.internalPort + ",CLIENT://127.0.0.1:" + b.advertisedPort);
    p.setProperty("listener.security.protocol.map", "INTERNAL:PLAINTEXT,CLIENT:PLAINTEXT");
    p.setProperty("inter.broker.listener.name", "INTERNAL");
    p.setProperty("log.dirs", b.dataDir().toString());
    quorum.configure(b, brokers, p);
    write(p, b);
  }

  /** NODE/server.properties, sorted, with a header. */
  static void write(Properties p, Broker node) throws IOException {
    StringBuilder text = new StringBuilder("# written by prodsim's kafka-cluster for " + node.dir.getFileName() + "\n");
    List<String> keys = new ArrayList<>(p.stringPropertyNames());
    Collections.sort(keys);
    for (String k : keys) text.append(k).append('=').append(p.getProperty(k)).append('\n');
    Files.createDirectories(node.dir);
    Files.writeString(node.properties, text, StandardCharsets.UTF_8);
  }

  private static final String BROKER_LOG4J = String.join("\n",
      "# The brokers' log: their stdout, which the supervisor sends to DIR/broker-ID/broker.log.",
      "log4j.rootLogger=INFO, out",
      "log4j.appender.out=org.apache.log4j.ConsoleAppender",
      "log4j.appender.out.layout=org.apache.log4j.PatternLayout",
      "log4j.appender.out.layout.ConversionPattern=[%d] %p %m (%c)%n",
      "log4j.logger.org.apache.zookeeper=WARN",
      "log4j.logger.org.apache.kafka.clients.NetworkClient=WARN",
      "log4j.logger.kafka.request.logger=WARN",
      "log4j.logger.kafka.log.LogCleaner=WARN",
      "log4j.logger.org.apache.kafka.common.utils.AppInfoParser=WARN",
      "log4j.logger.org.apache.kafka.common.metrics=WARN",
      "");

  /**
   * Kafka 4.x also has log4j-core on its classpath (Kafka logs through slf4j
   * and log4j 1 here all the same); without a configuration, its logger
   * controller prints an ERROR line at start.
   */
  private static final String BROKER_LOG4J2 = String.join("\n",
      "status = warn",
      "appender.out.type = Console",
      "appender.out.name = out",
      "appender.out.layout.type = PatternLayout",
      "appender.out.layout.pattern = [%d] %p %m (%c)%n",
      "rootLogger.level = warn",
      "rootLogger.appenderRef.out.ref = out",
      "");

  /** The command line of a node's JVM (the properties file is appended). */
  interface Launcher {
    List<String> command(Broker node);
  }

  /**
   * java with small-JVM flags, from the supervisor's own lib/. With a
   * class-data-sharing archive that build.sh made (OUT_DIR/broker.jsa, and
   * OUT_DIR/controller.jsa for KRaft's dedicated controller), the JVM maps
   * the classes a broker loads instead of parsing and verifying them (less
   * CPU at start). PRODSIM_CDS_TRAIN_DIR (build.sh's training run) makes
   * each node write its archive there at exit instead.
   */
  private Launcher launcher(Path dir) {
    String libProperty = System.getProperty("prodsim.cluster.lib");
    Path lib;
    if (libProperty != null) {
      lib = Path.of(libProperty);
    } else {
      try {
        lib = Path.of(Cluster.class.getProtectionDomain().getCodeSource().getLocation().toURI()).getParent();
      } catch (URISyntaxException e) {
        throw new IllegalStateException(e);
      }
    }
    String train = System.getenv("PRODSIM_CDS_TRAIN_DIR");
    String extra = System.getenv("PRODSIM_BROKER_JAVA_OPTS");
    return node -> {
      List<String> cmd = new ArrayList<>();
      cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      Collections.addAll(cmd, "-Xms64m", "-Xmx256m", "-Xss512k", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
          "-XX:-UsePerfData", "-XX:ReservedCodeCacheSize=64m", "-XX:MaxDirectMemorySize=128m",
          "-Djava.awt.headless=true", "-Xlog:disable", "-Xlog:all=warning:stderr", "-Xlog:cds=off",
          "-Xlog:cds+dynamic=off", "-Dlog4j.configuration=file:" + dir.resolve("log4j-broker.properties"),
          "-Dlog4j2.configurationFile=" + dir.resolve("log4j2-broker.properties"));
      String archive = (node.dir.getFileName().toString().equals("controller") ? "controller" : "broker") + ".jsa";
      if (train != null && !train.isBlank()) {
        cmd.add("-XX:ArchiveClassesAtExit=" + Path.of(train, node.dir.getFileName() + ".jsa"));
      } else if (lib.getParent() != null && Files.isRegularFile(lib.getParent().resolve(archive))) {
        cmd.add("-XX:SharedArchiveFile=" + lib.getParent().resolve(archive));
      }
      if (extra != null && !extra.isBlank()) Collections.addAll(cmd, extra.trim().split("\\s+"));
      Collections.addAll(cmd, "-cp", lib + File.separator + "*", "dev.prodsim.cluster.BrokerMain");
      return cmd;
    };
  }

  private String internalBootstrap() {
    return brokers.stream().map(b -> "127.0.0.1:" + b.internalPort).collect(Collectors.joining(","));
  }

  private static Properties adminConfig(String bootstrap) {
    Properties p = new Properties();
    p.setProperty("bootstrap.servers", bootstrap);
    p.setProperty("client.id", "prodsim-cluster");
    p.setProperty("request.timeout.ms", "5000");
    p.setProperty("default.api.timeout.ms", "15000");
    p.setProperty("retry.backoff.ms", "100");
    p.setProperty("reconnect.backoff.ms", "50");
    p.setProperty("reconnect.backoff.max.ms", "1000");
    p.setProperty("metadata.max.age.ms", "5000");
    return p;
  }

  /** Throws if a broker's JVM has exited (with its code). */
  private void checkAlive(List<Integer> ids) throws CommandException {
    quorum.check();
    for (int id : ids) {
      Broker b = brokers.get(id);
      if (!b.running()) {
        throw new CommandException("broker " + id + " exited (code " + b.exitCode() + "); see " + b.log);
      }
    }
  }

  private static boolean past(long deadline) {
    return System.nanoTime() - deadline > 0;
  }

  private static long remainingMs(long deadline) {
    return Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
  }

  private static void sleep(long ms) throws InterruptedException {
    Thread.sleep(ms);
  }

  /** Until describeCluster lists every broker of ids. */
  private void awaitRegistered(List<Integer> ids, long deadline) throws Exception {
    String last = "";
    while (true) {
      checkAlive(ids);
      try {
        Set<Integer> live = admin.describeCluster().nodes().get(Math.min(5000, remainingMs(deadline)),
            TimeUnit.MILLISECONDS).stream().map(Node::id).collect(Collectors.toSet());
        if (live.containsAll(ids)) return;
        last = "live brokers " + new java.util.TreeSet<>(live);
      } catch (Exception e) {
        last = reason(e);
      }
      if (past(deadline)) throw new CommandException("brokers " + ids + " did not register: " + last);
      sleep(200);
    }
  }

  private void createTopics(long deadline) throws Exception {
    int n = brokers.size();
    List<NewTopic> topics = new ArrayList<>();
    for (Args.Topic t : args.topics) {
      Map<Integer, List<Integer>> assignment = new LinkedHashMap<>();
      for (int p = 0; p < t.partitions(); p++) {
        List<Integer> replicas = new ArrayList<>();
        for (int k = 0; k < t.replicationFactor(); k++) replicas.add((p + k) % n);
        assignment.put(p, replicas);
      }
      topics.add(new NewTopic(t.name(), assignment)
          .configs(Map.of("min.insync.replicas", Integer.toString(args.minInsync))));
    }
    String last = "";
    List<NewTopic> pending = topics;
    while (!pending.isEmpty()) {
      Map<String, org.apache.kafka.common.KafkaFuture<Void>> results = admin.createTopics(pending).values();
      List<NewTopic> again = new ArrayList<>();
      for (NewTopic t : pending) {
        try {
          results.get(t.name()).get(Math.min(10_000, remainingMs(deadline)), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
          if (e.getCause() instanceof TopicExistsException) continue;
          last = t.name() + ": " + reason(e);
          again.add(t);
        } catch (java.util.concurrent.TimeoutException e) {
          last = t.name() + ": timed out";
          again.add(t);
        }
      }
      pending = again;
      if (pending.isEmpty()) return;
      if (past(deadline)) throw new CommandException("could not create the topics: " + last);
      sleep(200);
    }
  }

  private List<String> topicNames() {
    return args.topics.stream().map(Args.Topic::name).collect(Collectors.toList());
  }

  /**
   * Until every broker's own Metadata answer lists every broker and every
   * partition of the topics with a leader and the ISR equal to the replicas.
   */
  private void awaitTopicsReady(long deadline) throws Exception {
    List<Integer> all = brokers.stream().map(b -> b.id).collect(Collectors.toList());
    String last = "";
    while (true) {
      checkAlive(all);
      String missing = null;
      for (Broker b : brokers) {
        missing = notReady(b, all);
        if (missing != null) break;
      }
      if (missing == null) return;
      last = missing;
      if (past(deadline)) throw new CommandException("the topics did not become ready: " + last);
      sleep(200);
    }
  }

  /** Why broker b's view is not ready yet; null if it is. */
  private String notReady(Broker b, List<Integer> all) {
    MetadataProbe.View v;
    try {
      v = MetadataProbe.ask(b.internalPort, topicNames(), 3000);
    } catch (IOException e) {
      return "broker " + b.id + ": " + reason(e);
    }
    if (!v.brokers().containsAll(all)) return "broker " + b.id + " lists brokers " + v.brokers();
    for (Args.Topic t : args.topics) {
      for (int p = 0; p < t.partitions(); p++) {
        MetadataProbe.Partition mp = v.partitions().get(t.name() + " " + p);
        if (mp == null) return "broker " + b.id + " does not know " + t.name() + " " + p;
        if (mp.error() != 0 || mp.leader() < 0 || mp.isr().size() != mp.replicas().size()) {
          return "broker " + b.id + ": " + t.name() + " " + p + " error " + mp.error() + " leader " + mp.leader()
              + " isr " + mp.isr() + " replicas " + mp.replicas();
        }
      }
    }
    return null;
  }

  // ------------------------------------------------------------- commands

  /** One command line; its answer's lines (the first is "ok ..." or "error ..."). */
  List<String> handle(String line) {
    String[] w = line.trim().split("\\s+");
    try {
      switch (w[0]) {
        case "leaders":
          arity(w, 0);
          return leaders();
        case "crash":
          arity(w, 1);
          return List.of(crash(broker(w[1])));
        case "restart":
          arity(w, 1);
          return List.of(restart(broker(w[1])));
        case "stop":
          arity(w, 1);
          return List.of(stop(broker(w[1])));
        case "pause":
          arity(w, 1);
          return List.of(pause(broker(w[1])));
        case "resume":
          arity(w, 1);
          return List.of(resume(broker(w[1])));
        case "move-leader":
          arity(w, 3);
          return List.of(moveLeader(topic(w[1]), partition(w[1], w[2]), broker(w[3])));
        case "shrink-isr":
          arity(w, 3);
          return List.of(shrinkIsr(topic(w[1]), partition(w[1], w[2]), broker(w[3])));
        case "dump":
          arity(w, 0);
          return dump();
        default:
          throw new CommandException("unknown command " + w[0]);
      }
    } catch (CommandException e) {
      return List.of("error " + oneLine(e.getMessage()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return List.of("error interrupted");
    } catch (Exception e) {
      return List.of("error " + oneLine(reason(e)));
    }
  }

  private static void arity(String[] w, int n) throws CommandException {
    if (w.length != n + 1) throw new CommandException(w[0] + " takes " + n + " argument(s)");
  }

  private Broker broker(String s) throws CommandException {
    if (!s.matches("[0-9]{1,4}") || Integer.parseInt(s) >= brokers.size()) {
      throw new CommandException("no broker " + s + " (ids are 0.." + (brokers.size() - 1) + ")");
    }
    return brokers.get(Integer.parseInt(s));
  }

  private Args.Topic topic(String name) throws CommandException {
    for (Args.Topic t : args.topics) {
      if (t.name().equals(name)) return t;
    }
    throw new CommandException("no topic " + name);
  }

  private static int partition(String topic, String s) throws CommandException {
    if (!s.matches("[0-9]{1,6}")) throw new CommandException("not a partition: " + s);
    return Integer.parseInt(s);
  }

  /**
   * Every partition of the topics as one broker answers a Metadata request
   * (what a client bootstrapping there would be told): the lowest-numbered
   * broker that runs, is not paused and knows every topic. (Not the
   * AdminClient: it may send its request to a paused broker and wait out
   * its request timeout.)
   */
  private List<String> leaders() throws Exception {
    MetadataProbe.View v = view(topicNames());
    List<String> out = new ArrayList<>();
    out.add("ok");
    for (Args.Topic t : args.topics) {
      for (int p = 0; p < t.partitions(); p++) {
        MetadataProbe.Partition mp = v.partitions().get(t.name() + " " + p);
        if (mp == null) {
          out.add(t.name() + " " + p + " leader=-1 isr= replicas=");
          continue;
        }
        out.add(t.name() + " " + p + " leader=" + Math.max(-1, mp.leader()) + " isr=" + ids(mp.isr())
            + " replicas=" + ids(mp.replicas()));
      }
    }
    out.add("end");
    return out;
  }

  /** The view of the lowest-numbered broker that runs, is not paused and knows every one of the topics. */
  private MetadataProbe.View view(List<String> topics) throws CommandException {
    String last = "no broker is running and not paused";
    for (Broker b : brokers) {
      if (!b.running() || b.paused()) continue;
      try {
        MetadataProbe.View v = MetadataProbe.ask(b.internalPort, topics, 3000);
        String unknown = null;
        for (String t : topics) {
          Integer err = v.topicErrors().get(t);
          if (err == null || err != 0) unknown = t + " (error " + err + ")";
        }
        if (unknown == null) return v;
        last = "broker " + b.id + " does not know " + unknown;
      } catch (IOException e) {
        last = "broker " + b.id + ": " + reason(e);
      }
    }
    throw new CommandException(last);
  }

  private String crash(Broker b) throws CommandException {
    if (!b.kill()) throw new CommandException("broker " + b.id + " is not running");
    return "ok";
  }

  private String restart(Broker b) throws Exception {
    if (b.running()) throw new CommandException("broker " + b.id + " is running");
    long deadline = System.nanoTime()
        + TimeUnit.MILLISECONDS.toNanos(quorum.failureDetectionMs() + STOP_BOUND_MS);
    quorum.awaitDeregistered(b.id, deadline);
    b.start(javaCommand);
    try {
      awaitUp(b, deadline);
    } catch (CommandException e) {
      System.err.println("---- broker " + b.id + " (" + b.log + "), last lines:");
      System.err.println(b.tail(40));
      throw e;
    }
    return "ok";
  }

  /**
   * Until the broker answers on its own INTERNAL listener (a broker
   * processes requests only once started: in KRaft once unfenced) and the
   * cluster view it serves lists it (and, with ZooKeeper, it is in
   * /brokers/ids).
   */
  private void awaitUp(Broker b, long deadline) throws Exception {
    String last = "";
    while (true) {
      if (!b.running()) {
        throw new CommandException("broker " + b.id + " exited (code " + b.exitCode() + "); see " + b.log);
      }
      if (quorum.registered(b.id)) {
        try {
          MetadataProbe.View v = MetadataProbe.ask(b.internalPort, List.of(), 3000);
          if (v.brokers().contains(b.id)) return;
          last = "it lists brokers " + v.brokers();
        } catch (IOException e) {
          last = reason(e);
        }
      } else {
        last = "not registered in ZooKeeper";
      }
      if (past(deadline)) throw new CommandException("broker " + b.id + " did not come up: " + last);
      sleep(200);
    }
  }

  private String stop(Broker b) throws CommandException {
    if (!b.running()) throw new CommandException("broker " + b.id + " is not running");
    if (!b.stop(STOP_BOUND_MS)) {
      throw new CommandException("broker " + b.id + " did not stop within " + STOP_BOUND_MS + " ms of SIGTERM;"
          + " killed");
    }
    return "ok";
  }

  private String pause(Broker b) throws CommandException {
    if (!b.running()) throw new CommandException("broker " + b.id + " is not running");
    b.pause();
    return "ok";
  }

  private String resume(Broker b) throws CommandException {
    if (!b.running()) throw new CommandException("broker " + b.id + " is not running");
    b.resume();
    return "ok";
  }

  private MetadataProbe.Partition describe(Args.Topic t, int partition) throws CommandException {
    if (partition >= t.partitions()) throw new CommandException("no partition " + t.name() + " " + partition);
    MetadataProbe.Partition p = view(List.of(t.name())).partitions().get(t.name() + " " + partition);
    if (p == null) throw new CommandException("no partition " + t.name() + " " + partition);
    return p;
  }

  /**
   * alterPartitionReassignments to the same replicas with ID first (if it is
   * not first already), then a preferred-leader election (electLeaders
   * PREFERRED, again every 2 s), until every running broker that is not
   * paused names ID the leader in its Metadata answer.
   */
  private String moveLeader(Args.Topic t, int partition, Broker b) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(OP_BOUND_MS);
    TopicPartition tp = new TopicPartition(t.name(), partition);
    MetadataProbe.Partition info = describe(t, partition);
    List<Integer> replicas = info.replicas();
    if (!replicas.contains(b.id)) {
      throw new CommandException("broker " + b.id + " holds no replica of " + tp + " (replicas " + replicas + ")");
    }
    // Already the leader: only wait for every broker to say so (a preferred
    // election would move it to the first replica, which may be another).
    boolean elect = info.leader() != b.id;
    // Only an ISR member can be elected (unclean elections are off): say so
    // before changing the replica order.
    if (elect && !info.isr().contains(b.id)) {
      throw new CommandException("broker " + b.id + " is not in the ISR of " + tp + " (isr " + info.isr() + ")");
    }
    List<Integer> order = new ArrayList<>();
    order.add(b.id);
    for (int r : replicas) {
      if (r != b.id) order.add(r);
    }
    if (elect && replicas.get(0) != b.id) {
      while (true) {
        try {
          admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(order))))
              .all().get(15_000, TimeUnit.MILLISECONDS);
          break;
        } catch (ExecutionException e) {
          if (!(e.getCause() instanceof RetriableException) || past(deadline)) throw e;
          sleep(200);
        }
      }
      while (true) {
        Map<TopicPartition, PartitionReassignment> ongoing =
            admin.listPartitionReassignments(Set.of(tp)).reassignments().get(15_000, TimeUnit.MILLISECONDS);
        List<Integer> now = describe(t, partition).replicas();
        if (!ongoing.containsKey(tp) && now.equals(order)) break;
        if (past(deadline)) {
          throw new CommandException("the reassignment of " + tp + " to " + order + " did not complete (replicas "
              + now + ")");
        }
        sleep(POLL_MS);
      }
    }
    String last = "";
    long nextElection = System.nanoTime();
    while (true) {
      if (elect && System.nanoTime() - nextElection >= 0) {
        Map<TopicPartition, Optional<Throwable>> r = admin.electLeaders(ElectionType.PREFERRED, Set.of(tp))
            .partitions().get(15_000, TimeUnit.MILLISECONDS);
        Optional<Throwable> err = r.getOrDefault(tp, Optional.empty());
        last = err.isPresent() && !(err.get() instanceof ElectionNotNeededException)
            ? "preferred election: " + reason(err.get()) : "";
        nextElection = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
      }
      String lagging = leaderEverywhere(tp, b.id);
      if (lagging == null) return "ok";
      if (last.isEmpty() || !last.startsWith("preferred")) last = lagging;
      if (past(deadline)) throw new CommandException(tp + ": broker " + b.id + " did not become leader: " + last);
      sleep(POLL_MS);
    }
  }

  /** Null when no running, unpaused broker lists `id` in the partition's ISR; else which does. */
  private String inIsrSomewhere(TopicPartition tp, int id) {
    for (Broker o : brokers) {
      if (!o.running() || o.paused()) continue;
      try {
        MetadataProbe.Partition mp =
            MetadataProbe.ask(o.internalPort, List.of(tp.topic()), 3000).partitions().get(tp.topic() + " " + tp.partition());
        if (mp == null || mp.isr().contains(id)) {
          return "broker " + o.id + " says isr " + (mp == null ? "unknown" : mp.isr());
        }
      } catch (IOException e) {
        return "broker " + o.id + ": " + reason(e);
      }
    }
    return null;
  }

  /**
   * Null when every running broker (paused ones aside) names `leader` as
   * the partition's leader in its Metadata answer; else what one says.
   */
  private String leaderEverywhere(TopicPartition tp, int leader) {
    for (Broker o : brokers) {
      if (!o.running() || o.paused()) continue;
      try {
        MetadataProbe.View v = MetadataProbe.ask(o.internalPort, List.of(tp.topic()), 3000);
        MetadataProbe.Partition mp = v.partitions().get(tp.topic() + " " + tp.partition());
        if (mp == null || mp.leader() != leader) {
          return "broker " + o.id + " says leader " + (mp == null ? "unknown" : mp.leader());
        }
      } catch (IOException e) {
        return "broker " + o.id + ": " + reason(e);
      }
    }
    return null;
  }

  /**
   * pause ID (SIGSTOP), then wait until ID is out of the partition's ISR:
   * its leader drops it after replica.lag.time.max.ms without a fetch (or,
   * if ID leads it, the controller does once its session lapses). The broker
   * stays paused until `resume ID`.
   */
  private String shrinkIsr(Args.Topic t, int partition, Broker b) throws Exception {
    MetadataProbe.Partition info = describe(t, partition);
    if (!info.replicas().contains(b.id)) {
      throw new CommandException("broker " + b.id + " holds no replica of " + t.name() + " " + partition);
    }
    if (!b.running()) throw new CommandException("broker " + b.id + " is not running");
    if (!b.paused()) b.pause();
    long bound = 2 * Math.max(defaultLagMs, quorum.failureDetectionMs()) + OP_BOUND_MS;
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(bound);
    String last = "";
    while (true) {
      List<Integer> isr = quorum.isr(t.name(), partition);
      if (isr != null) {
        if (!isr.contains(b.id)) return "ok";
        last = "isr " + isr;
      } else {
        // KRaft: out of the ISR as every broker that answers sees it.
        String still = inIsrSomewhere(new TopicPartition(t.name(), partition), b.id);
        if (still == null) return "ok";
        last = still;
      }
      if (past(deadline)) {
        throw new CommandException("broker " + b.id + " (paused) is still in the ISR of " + t.name() + " " + partition
            + " after " + bound + " ms: " + last);
      }
      sleep(POLL_MS);
    }
  }

  /**
   * Stops every running broker: SIGTERM to all at once (Kafka's clean
   * shutdown), then each one is waited for until it exits or until its log
   * manager has closed every log and marked the shutdown clean
   * (data/.kafka_cleanshutdown, written after the logs are flushed and the
   * high watermarks checkpointed); a broker still running then is killed
   * (-9) 300 ms later. That skips what comes after: in KRaft combined mode,
   * the controllers' graceful Raft shutdown, which waits 5 s for a quorum
   * that is shutting down too. SIGKILL for any broker not done in boundMs.
   */
  private void stopAll(long boundMs) {
    List<Broker> stopping = new ArrayList<>();
    for (Broker b : brokers) {
      if (b.running()) {
        b.terminate();
        stopping.add(b);
      }
    }
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(boundMs);
    Map<Broker, Long> cleanSince = new java.util.HashMap<>();
    while (!stopping.isEmpty()) {
      for (java.util.Iterator<Broker> it = stopping.iterator(); it.hasNext();) {
        Broker b = it.next();
        if (!b.running()) {
          it.remove();
          continue;
        }
        if (Files.exists(b.dataDir().resolve(".kafka_cleanshutdown"))) {
          long since = cleanSince.computeIfAbsent(b, k -> System.nanoTime());
          if (System.nanoTime() - since > TimeUnit.MILLISECONDS.toNanos(300)) {
            b.kill();
            it.remove();
          }
        } else if (past(deadline)) {
          System.err.println("prodsim: broker " + b.id + " did not stop within " + boundMs + " ms; killing it");
          b.kill();
          it.remove();
        }
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
  }

  private List<String> dump() throws Exception {
    long t0 = System.nanoTime();
    stopAll(STOP_BOUND_MS);
    long t1 = System.nanoTime();
    StringBuilder sb = new StringBuilder();
    Dump.write(sb, brokers, args.topics);
    System.err.printf("prodsim: dump: brokers stopped in %d ms, logs read in %d ms%n",
        TimeUnit.NANOSECONDS.toMillis(t1 - t0), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t1));
    List<String> out = new ArrayList<>();
    out.add("ok");
    if (sb.length() > 0) Collections.addAll(out, sb.toString().split("\n"));
    out.add("end");
    return out;
  }

  // ------------------------------------------------------------- shutdown

  /** quit / end of stdin: a clean stop if it comes within a few seconds, then everything removed. */
  synchronized void quit() {
    if (closed) return;
    if (admin != null) admin.close(Duration.ofSeconds(2));
    admin = null;
    stopAll(QUIT_STOP_BOUND_MS);
    quorum.close();
    closed = true;
    if (!args.keepDir) deleteDir();
  }

  /** The shutdown hook, and a start that failed: kill -9 everything, no waiting beyond that. */
  void emergencyStop() {
    for (Broker b : brokers) b.destroyNow();
    for (Broker b : brokers) b.waitExit(5_000);
    quorum.destroyNow();
    synchronized (this) {
      if (closed) return;
      closed = true;
    }
    if (!args.keepDir) deleteDir();
  }

  /** For errors at start: each broker's last lines, to stderr. */
  void printTails(int lines) {
    List<Broker> all = new ArrayList<>(quorum.nodes());
    all.addAll(brokers);
    for (Broker b : all) {
      System.err.println("---- " + b.dir.getFileName() + " (" + b.log + "), last lines:");
      System.err.println(b.tail(lines));
    }
  }

  private void deleteDir() {
    try (Stream<Path> s = Files.walk(args.dir)) {
      List<Path> all = s.sorted(Comparator.reverseOrder()).collect(Collectors.toList());
      for (Path p : all) {
        try {
          Files.deleteIfExists(p);
        } catch (IOException e) {
          System.err.println("prodsim: cannot delete " + p + ": " + e);
        }
      }
    } catch (IOException | UncheckedIOException e) {
      System.err.println("prodsim: cannot delete " + args.dir + ": " + e);
    }
  }

  // --------------------------------------------------------------- helpers

  private static String ids(List<Integer> nodes) {
    StringJoiner j = new StringJoiner(",");
    for (int n : nodes) j.add(Integer.toString(n));
    return j.toString();
  }

  static String reason(Throwable e) {
    if (e instanceof CommandException) return e.getMessage();
    Throwable c = e;
    while ((c instanceof ExecutionException || c instanceof java.util.concurrent.CompletionException)
        && c.getCause() != null) {
      c = c.getCause();
    }
    String m = c.getMessage();
    return c.getClass().getSimpleName() + (m == null ? "" : ": " + m);
  }

  static String oneLine(String s) {
    return s == null ? "" : s.replaceAll("[\\r\\n]+", " ").trim();
  }
}
