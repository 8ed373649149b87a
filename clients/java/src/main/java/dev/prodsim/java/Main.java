package dev.prodsim.java;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.Metadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProdsimFactory;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.protocol.Errors;

/**
 * prodsim-java: the driver protocol (clients/README.md) on Apache Kafka's
 * Java producer. With PRODSIM_CLOCK=simulated it runs the real KafkaProducer
 * in lockstep (Lockstep, SimTime, SimSelector, ProdsimFactory); without it,
 * on the wall clock with real sockets through the public constructor.
 * README.md here has the mapping and what is and is not exact.
 *
 * <p>Threads in lockstep: main is the coordinator (reads steps, delivers
 * inputs, prints idle); "prodsim-app" runs the job (send, waits, close); the
 * producer's own I/O thread runs Kafka's Sender. With the job's config pair
 * `threads` N > 1, "prodsim-app" starts N sending threads
 * ("prodsim-app-1"..) and waits for them before closing. Only one of the
 * lockstep's threads runs at a time, so event lines need no ordering beyond
 * Out's lock.
 */
public final class Main {
  static final String kClient = "java";

  private final Job job;
  private final Map<String, Object> props;
  private final boolean simulated;
  private Lockstep ls;
  private SimSelector selector;
  private final long startNs = System.nanoTime();

  // Job state, touched by the application thread and the producer's
  // callbacks (on the I/O thread); in lockstep never at once, on the wall
  // clock under `this`.
  private long outstanding;
  // The message each application thread is handing to send() (-1: none),
  // and whether a callback inside that send() refused it.
  private static final class InSend {
    long id = -1;
    boolean refused;
  }
  private final ThreadLocal<InSend> inSend = ThreadLocal.withInitial(InSend::new);
  // Ids whose produce line is out: printed by the sending thread once send()
  // returned, or first by the id's outcome callback on the I/O thread when
  // that came sooner (wall clock, several threads: a thread preempted
  // between send() and its print), so a produce line always precedes its
  // outcome.
  private java.util.BitSet producePrinted;
  private boolean fatalReported;
  private Object transactionManager;
  // Lockstep: the metadata calls that ask for a topic (differ by version).
  private ProdsimFactory.Topics topics;
  private volatile boolean closingMode;
  private boolean detachedForClose;
  private volatile boolean appDone;

  Main(Job job, Map<String, Object> props, boolean simulated) {
    this.job = job;
    this.props = props;
    this.simulated = simulated;
  }

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 16);
    String line = in.readLine();
    boolean simulated = "simulated".equals(System.getenv("PRODSIM_CLOCK"));
    long seed = 0;
    Job job;
    Map<String, Object> props;
    try {
      if (line == null) throw new IllegalArgumentException("no job line on stdin");
      job = Job.parse(line);
      if (simulated) {
        String s = System.getenv("PRODSIM_SEED");
        if (s == null || !s.matches("[0-9]{1,20}")) throw new IllegalArgumentException("PRODSIM_SEED: want a decimal uint64");
        seed = Long.parseUnsignedLong(s);
      }
      props = Config.build(job, simulated);
      new ProducerConfig(props); // refuses bad values (a job error), as the producer would
    } catch (RuntimeException e) {
      Out.jobError(e.getMessage() == null ? e.toString() : e.getMessage());
      System.exit(2);
      return;
    }
    Main m = new Main(job, props, simulated);
    int rc = simulated ? m.runSimulated(in, seed) : m.runWall();
    System.exit(rc);
  }

  /** kafka-clients' own version (AppInfoParser moved to utils.internals in 4.4). */
  static String kafkaVersion() {
    for (String c : new String[] {"org.apache.kafka.common.utils.internals.AppInfoParser",
                                  "org.apache.kafka.common.utils.AppInfoParser"}) {
      try {
        return (String) Class.forName(c).getMethod("getVersion").invoke(null);
      } catch (ReflectiveOperationException e) {
        // the other one
      }
    }
    return "unknown";
  }

  long tUs() {
    return simulated ? ls.nowNs() / 1000L : (System.nanoTime() - startNs) / 1000L;
  }

  // ------------------------------------------------------------------ lockstep

  int runSimulated(BufferedReader in, long seed) throws Exception {
    ls = new Lockstep(seed);
    Seeds.seedCollections(seed);
    SimTime time = new SimTime(ls);
    selector = new SimSelector(ls) {
      @Override
      protected void onWakeupFrom(Lockstep.Part p) {
        // KafkaProducer.close(0): forceClose -> initiateClose -> wakeup is
        // its last step before joining the I/O thread: from here the
        // application thread waits for that thread outside the lockstep.
        if (closingMode && p != null && "app".equals(p.name) && !detachedForClose) {
          detachedForClose = true;
          ls.detach();
        }
      }

      @Override
      protected void onClosed() {
        ls.retire(); // the I/O thread's last call into the driver
      }
    };
    // PRODSIM_JAVA_RUN_AHEAD=0 answers every step at its own now_ns (a
    // step at each of the client's deadlines): for measuring, and for
    // checking that running ahead changes nothing the cluster sees.
    final boolean runAhead = !"0".equals(System.getenv("PRODSIM_JAVA_RUN_AHEAD"));
    final int[] exit = {0};
    Thread app = new Thread(() -> {
      ls.register("app");
      try {
        exit[0] = appMain(time, seed);
      } catch (Throwable t) {
        t.printStackTrace();
        exit[0] = 1;
      } finally {
        appDone = true;
        ls.retire();
      }
    }, "prodsim-app");
    app.setDaemon(true);
    app.start();
    ls.awaitParticipants(1);

    List<String> inputs = new ArrayList<>();
    long step = -1;
    String line;
    while ((line = in.readLine()) != null) {
      if (line.startsWith("{\"step\":")) {
        Map<?, ?> o = (Map<?, ?>) Json.parse(line);
        if (!List.of("step", "now_ns", "until_ns").equals(new ArrayList<>(o.keySet()))) {
          throw new IllegalArgumentException("lockstep: unexpected step line: " + line);
        }
        step = (Long) o.get("step");
        long nowNs = (Long) o.get("now_ns");
        long untilNs = (Long) o.get("until_ns");
        final List<String> todo = new ArrayList<>(inputs);
        inputs.clear();
        long printed = Out.count();
        long next = ls.runStep(nowNs, () -> deliver(todo));
        long stopped = nowNs;
        // Running ahead (clients/README.md): after a step that printed
        // nothing, nothing can arrive before until_ns, so the client's own
        // deadlines before it run now, one instant at a time, until one of
        // them makes the client print something.
        if (runAhead && Out.count() == printed && !appDone) {
          while (next != Lockstep.NONE && (untilNs < 0 || next < untilNs)) {
            stopped = next;
            next = ls.runStep(stopped, () -> {});
            if (Out.count() != printed || appDone) break;
          }
        }
        if (appDone) {
          Out.line("{\"exit\":" + step + ",\"now_ns\":" + stopped + "}");
          return exit[0];
        }
        Out.line("{\"idle\":" + step + ",\"now_ns\":" + stopped + ",\"next_ns\":"
            + (next == Lockstep.NONE ? -1 : next) + "}");
      } else if (!line.isBlank()) {
        inputs.add(line);
      }
    }
    return appDone ? exit[0] : 1;
  }

  private void deliver(List<String> lines) {
    for (String l : lines) {
      Map<?, ?> o = (Map<?, ?>) Json.parse(l);
      String what = (String) o.keySet().iterator().next();
      int c = (int) (long) (Long) o.get(what);
      switch (what) {
        case "connected": selector.inputConnected(c); break;
        case "data": selector.inputData(c, Base64.getDecoder().decode((String) o.get("bytes"))); break;
        case "closed": selector.inputClosed(c, (String) o.get("how")); break;
        default: throw new IllegalArgumentException("unknown lockstep line: " + l);
      }
    }
  }

  /** Parks the application thread until `deadlineNs` or `cond`. */
  private void parkApp(long deadlineNs, BooleanSupplier cond) {
    if (simulated) {
      ls.park(deadlineNs, cond, null);
      return;
    }
    synchronized (this) {
      long waitNs = deadlineNs - (System.nanoTime() - startNs);
      if (cond != null && cond.getAsBoolean()) return;
      if (waitNs <= 0) return;
      try {
        this.wait(Math.max(1, Math.min(waitNs / 1_000_000L, 100)));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private long nowNs() {
    return simulated ? ls.nowNs() : System.nanoTime() - startNs;
  }

  private int appMain(SimTime time, long seed) throws Exception {
    ProdsimFactory.Built b;
    try {
      b = ProdsimFactory.build(props, selector, time, ls::ensureRegistered, seed);
      // send() blocking on a full buffer.memory waits on the simulated clock.
      ProdsimFactory.replaceBufferPoolLock(b.producer, new SimLock(ls));
    } catch (Exception e) {
      Throwable c = e.getCause() != null ? e.getCause() : e;
      Out.jobError("the producer could not be created: " + c);
      return 3;
    }
    ls.awaitParticipants(2);
    transactionManager = b.transactionManager;
    topics = b.topics;
    return runJob(b.producer, b.metadata);
  }

  // ------------------------------------------------------------------ wall clock

  int runWall() {
    KafkaProducer<byte[], byte[]> p;
    try {
      p = new KafkaProducer<>(props);
    } catch (Exception e) {
      Throwable c = e.getCause() != null ? e.getCause() : e;
      Out.jobError("the producer could not be created: " + c);
      return 3;
    }
    try {
      transactionManager = fieldOrNull(p, "transactionManager");
      return runJob(p, null);
    } catch (Exception e) {
      e.printStackTrace();
      return 1;
    }
  }

  static Object fieldOrNull(Object o, String name) {
    try {
      java.lang.reflect.Field f = o.getClass().getDeclaredField(name);
      f.setAccessible(true);
      return f.get(o);
    } catch (ReflectiveOperationException e) {
      return null;
    }
  }

  // ------------------------------------------------------------------ the job

  private int runJob(KafkaProducer<byte[], byte[]> producer, Metadata metadata) throws Exception {
    // Several sending threads: no order between them (clients/README.md,
    // "order":"per_call"; each thread is one `call`, its index + 1).
    Out.event("start", "\"client\":\"" + kClient + "\",\"version\":" + Json.quote(kafkaVersion())
        + (job.threads > 1 ? ",\"order\":\"per_call\"" : ""), tUs());
    producePrinted = new java.util.BitSet((int) Math.min(job.messages + 1, Integer.MAX_VALUE));
    long closeAtNs = job.closeAtUs < 0 ? Lockstep.NONE : job.closeAtUs * 1000L;
    long maxBlockMs = Long.parseLong(String.valueOf(new ProducerConfig(props).getLong(ProducerConfig.MAX_BLOCK_MS_CONFIG)));
    byte[] value = new byte[job.valueBytes];
    for (int k = 0; k < value.length; k++) value[k] = (byte) ('a' + k % 26);
    if (job.threads == 1) {
      sendShare(producer, metadata, 0, value, maxBlockMs, closeAtNs);
    } else {
      runThreads(producer, metadata, value, maxBlockMs, closeAtNs);
    }
    long held;
    synchronized (this) {
      held = outstanding;
    }
    Out.event("closing", "\"outstanding\":" + held, tUs());
    long flushDeadline = nowNs() + job.flushTimeoutMs * 1_000_000L;
    while (outstanding() > 0 && nowNs() < flushDeadline) parkApp(flushDeadline, () -> outstanding() == 0);
    String flush = outstanding() == 0 ? "ok" : "timed_out";
    closingMode = true;
    producer.close(Duration.ZERO); // purges what is still held: each an error report
    if (detachedForClose) {
      detachedForClose = false;
      ls.reattach();
    }
    Out.event("closed", "\"outstanding\":" + outstanding() + ",\"flush\":\"" + flush + "\"", tUs());
    return 0;
  }

  private synchronized long outstanding() {
    return outstanding;
  }

  /**
   * Application thread `k` (0-based) of job.threads: sends ids k+1,
   * k+1+N, ... in that order, each once its burst is due (the job's bursts
   * are the whole application's: burst b is ids b*burst+1 .. (b+1)*burst,
   * and each thread sends its own of them). With one thread, every id in
   * order, the single application thread of before. With several, in
   * lockstep, each send() is one turn: the thread yields after it, so the
   * threads' sends alternate in a fixed round robin (with the I/O thread
   * running between them whenever it is runnable).
   */
  private void sendShare(KafkaProducer<byte[], byte[]> producer, Metadata metadata, int k, byte[] value,
                         long maxBlockMs, long closeAtNs) {
    final int n = job.threads;
    for (long id = k + 1; id <= job.messages; id += n) {
      long burstIndex = (id - 1) / job.burst;
      long dueNs = job.intervalUs == 0 ? 0 : burstIndex * job.intervalUs * 1000L;
      while (nowNs() < dueNs) {
        if (nowNs() >= closeAtNs) return;
        parkApp(Math.min(dueNs, closeAtNs), null);
      }
      if (nowNs() >= closeAtNs) return;
      sendOne(producer, metadata, id, value, maxBlockMs, closeAtNs);
      if (n > 1 && simulated) ls.yieldTurn();
    }
  }

  /**
   * job.threads application threads, "prodsim-app-1".. (lockstep roles
   * "app-1".., each seeded by its role), started one at a time in index
   * order, each registered in the lockstep before the next starts (so the
   * participants' order is fixed); the calling thread waits for all of them.
   */
  private void runThreads(KafkaProducer<byte[], byte[]> producer, Metadata metadata, byte[] value,
                          long maxBlockMs, long closeAtNs) throws Exception {
    final int n = job.threads;
    final java.util.concurrent.atomic.AtomicInteger finished = new java.util.concurrent.atomic.AtomicInteger();
    final Throwable[] failure = new Throwable[1];
    Thread[] ts = new Thread[n];
    for (int i = 0; i < n; i++) {
      final int k = i;
      final java.util.concurrent.CountDownLatch registered = new java.util.concurrent.CountDownLatch(1);
      ts[i] = new Thread(() -> {
        if (simulated) ls.register("app-" + (k + 1), registered::countDown);
        try {
          sendShare(producer, metadata, k, value, maxBlockMs, closeAtNs);
        } catch (Throwable t) {
          synchronized (failure) {
            if (failure[0] == null) failure[0] = t;
          }
        } finally {
          finished.incrementAndGet();
          if (simulated) ls.retire();
        }
      }, "prodsim-app-" + (k + 1));
      ts[i].setDaemon(true);
      ts[i].start();
      if (simulated) registered.await(); // a wall-clock wait for a thread start, no client code meanwhile
    }
    if (simulated) {
      while (finished.get() < n) ls.park(Lockstep.NONE, () -> finished.get() == n, null);
    } else {
      for (Thread t : ts) t.join();
    }
    synchronized (failure) {
      if (failure[0] instanceof Exception) throw (Exception) failure[0];
      if (failure[0] != null) throw new IllegalStateException(failure[0]);
    }
  }

  /**
   * Prints `id`'s produce line unless it is out already (the caller holds
   * `this`): the line's fields follow from the id alone.
   */
  private void printProduce(long id) {
    if (producePrinted.get((int) id)) return;
    producePrinted.set((int) id);
    outstanding++;
    String topic = job.topics.get((int) ((id - 1) % job.topics.size()));
    String key = job.keys == 0 ? null : "key-" + ((id - 1) % job.keys);
    Out.event("produce", "\"id\":" + id + ",\"topic\":" + Json.quote(topic) + ",\"key\":"
        + (key == null ? "null" : Json.quote(key))
        + (job.threads > 1 ? ",\"call\":" + ((id - 1) % job.threads + 1) : ""), tUs());
  }

  /**
   * Lockstep only: waits, on the simulated clock, for the topic's partitions
   * as KafkaProducer.waitOnMetadata would (4.4's ProducerMetadata waits with
   * Object.wait on the wall clock, and so does 2.2's Metadata; doing it here
   * keeps it in the lockstep).
   */
  private boolean awaitTopic(Metadata metadata, String topic, long maxBlockMs, long closeAtNs) {
    long deadlineNs = SimTime.satAdd(nowNs(), maxBlockMs);
    long requestedAtNs = -1;
    while (metadata.fetch().partitionCountForTopic(topic) == null) {
      if (nowNs() >= deadlineNs) return false;
      final int v;
      // Ask again once per instant: a version bump that brings no topic
      // (4.x rebootstraps while no broker is reachable) would otherwise
      // wake this loop and the I/O thread forever at one simulated instant,
      // where the wall clock would have moved.
      if (requestedAtNs != nowNs()) {
        requestedAtNs = nowNs();
        topics.add(topic, nowNs() / 1_000_000L);
        v = topics.requestUpdateForTopic(topic);
        selector.wakeup();
      } else {
        v = metadata.updateVersion();
      }
      ls.park(deadlineNs, () -> metadata.updateVersion() > v || metadata.isClosed(), null);
    }
    return true;
  }

  private void sendOne(KafkaProducer<byte[], byte[]> producer, Metadata metadata, long id, byte[] value,
                       long maxBlockMs, long closeAtNs) {
    String topic = job.topics.get((int) ((id - 1) % job.topics.size()));
    String key = job.keys == 0 ? null : "key-" + ((id - 1) % job.keys);
    if (metadata != null && !awaitTopic(metadata, topic, maxBlockMs, closeAtNs)) {
      errorLine(id, -1, Errors.REQUEST_TIMED_OUT.code(), "TimeoutException",
          "Topic " + topic + " not present in metadata after " + maxBlockMs + " ms.", "not_persisted");
      return;
    }
    Header h = new RecordHeader("prodsim-id", Long.toString(id).getBytes(StandardCharsets.US_ASCII));
    ProducerRecord<byte[], byte[]> rec = new ProducerRecord<>(topic, null,
        key == null ? null : key.getBytes(StandardCharsets.UTF_8), value, List.of(h));
    InSend mine = inSend.get();
    synchronized (this) {
      mine.id = id;
      mine.refused = false;
    }
    try {
      producer.send(rec, (md, ex) -> outcome(id, md, ex));
    } catch (Exception e) {
      synchronized (this) {
        mine.id = -1;
      }
      errorLine(id, -1, Errors.forException(e).code(), e.getClass().getSimpleName(), String.valueOf(e.getMessage()),
          "not_persisted");
      return;
    }
    synchronized (this) {
      mine.id = -1;
      if (mine.refused) return;
      printProduce(id);
    }
  }

  private void outcome(long id, RecordMetadata md, Exception ex) {
    boolean refused;
    synchronized (this) {
      // A callback inside send(), on the thread that called it: send()
      // refused the message (KafkaProducer.doSend reports an ApiException
      // through the callback and a failed future instead of throwing).
      InSend mine = inSend.get();
      refused = mine.id == id;
      if (refused) {
        mine.refused = true;
      } else {
        printProduce(id); // its send() has returned (or is about to): appended
        outstanding--;
      }
      notifyAll();
    }
    if (ex == null) {
      Out.event("ack", "\"id\":" + id + ",\"partition\":" + md.partition() + ",\"offset\":" + md.offset(), tUs());
      return;
    }
    Throwable fatal = ProdsimFactory.fatalError(transactionManager);
    if (fatal != null && !fatalReported) {
      fatalReported = true;
      Out.event("fatal", "\"code\":" + Errors.forException(fatal).code() + ",\"name\":"
          + Json.quote(fatal.getClass().getSimpleName()) + ",\"text\":" + Json.quote(String.valueOf(fatal.getMessage())), tUs());
    }
    int partition = md != null ? md.partition() : -1;
    String status = refused ? "not_persisted" : Status.of(ex);
    errorLine(id, partition, Errors.forException(ex).code(), ex.getClass().getSimpleName(),
        String.valueOf(ex.getMessage()), status);
  }

  private void errorLine(long id, int partition, int code, String name, String text, String status) {
    boolean fatal = ProdsimFactory.fatalError(transactionManager) != null;
    Out.event("error", "\"id\":" + id + ",\"partition\":" + partition + ",\"code\":" + code + ",\"name\":"
        + Json.quote(name) + ",\"text\":" + Json.quote(text) + ",\"status\":\"" + status + "\",\"fatal\":" + fatal, tUs());
  }

  // ------------------------------------------------------------------ job, config

  static final class Job {
    String bootstrap;
    List<String> topics;
    long messages, keys, burst, intervalUs, valueBytesL, closeAtUs, flushTimeoutMs;
    int valueBytes;
    List<String[]> config;
    // The driver's own config pair `threads` (Config.build): how many
    // application threads send.
    int threads = 1;

    static final Set<String> kKeys = Set.of("bootstrap", "topics", "messages", "keys", "burst", "interval_us",
        "value_bytes", "close_at_us", "flush_timeout_ms", "config");

    static Job parse(String line) {
      Object v = Json.parse(line);
      if (!(v instanceof Map)) throw new IllegalArgumentException("job: want an object");
      Map<?, ?> o = (Map<?, ?>) v;
      for (Object k : o.keySet()) {
        if (!kKeys.contains(k)) throw new IllegalArgumentException("job key \"" + k + "\": not a job key");
      }
      for (String k : kKeys) {
        if (!o.containsKey(k)) throw new IllegalArgumentException("job key \"" + k + "\": missing");
      }
      Job j = new Job();
      j.messages = integer(o, "messages", 0, 10_000_000L);
      j.keys = integer(o, "keys", 0, 10_000_000L);
      j.burst = integer(o, "burst", 1, 10_000_000L);
      j.intervalUs = integer(o, "interval_us", 0, 3_600_000_000L);
      j.valueBytes = (int) integer(o, "value_bytes", 0, 16L << 20);
      j.closeAtUs = integer(o, "close_at_us", -1, 86_400_000_000L);
      j.flushTimeoutMs = integer(o, "flush_timeout_ms", 0, 3_600_000L);
      Object b = o.get("bootstrap");
      if (!(b instanceof String) || ((String) b).isEmpty()) {
        throw new IllegalArgumentException("job key \"bootstrap\": want a non-empty string");
      }
      j.bootstrap = (String) b;
      Object t = o.get("topics");
      j.topics = new ArrayList<>();
      if (!(t instanceof List) || ((List<?>) t).isEmpty() || ((List<?>) t).size() > 1000) {
        throw new IllegalArgumentException("job key \"topics\": want 1..1000 strings of 1..249 bytes");
      }
      for (Object x : (List<?>) t) {
        int n = x instanceof String ? ((String) x).getBytes(StandardCharsets.UTF_8).length : 0;
        if (n < 1 || n > 249) throw new IllegalArgumentException("job key \"topics\": want 1..1000 strings of 1..249 bytes");
        j.topics.add((String) x);
      }
      Object c = o.get("config");
      j.config = new ArrayList<>();
      if (!(c instanceof List) || ((List<?>) c).size() > 1000) {
        throw new IllegalArgumentException("job key \"config\": want at most 1000 [name, value] string pairs");
      }
      for (Object x : (List<?>) c) {
        if (!(x instanceof List) || ((List<?>) x).size() != 2 || !(((List<?>) x).get(0) instanceof String)
            || !(((List<?>) x).get(1) instanceof String)) {
          throw new IllegalArgumentException("job key \"config\": want at most 1000 [name, value] string pairs");
        }
        j.config.add(new String[] {(String) ((List<?>) x).get(0), (String) ((List<?>) x).get(1)});
      }
      return j;
    }

    static long integer(Map<?, ?> o, String k, long lo, long hi) {
      Object v = o.get(k);
      if (!(v instanceof Long) || (Long) v < lo || (Long) v > hi) {
        throw new IllegalArgumentException("job key \"" + k + "\": want an integer in [" + lo + ", " + hi + "], got "
            + (v instanceof String ? Json.quote((String) v) : String.valueOf(v)));
      }
      return (Long) v;
    }
  }

  /** The producer's properties: the driver's defaults, the job's pairs, bootstrap. */
  static final class Config {
    static Map<String, Object> build(Job job, boolean simulated) {
      Set<String> known = ProducerConfig.configNames();
      Map<String, Object> p = new LinkedHashMap<>();
      p.put(ProducerConfig.CLIENT_ID_CONFIG, "prodsim-java");
      p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, "org.apache.kafka.common.serialization.ByteArraySerializer");
      p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, "org.apache.kafka.common.serialization.ByteArraySerializer");
      // No client telemetry (3.7+): its subscription requests and random
      // instance id have nothing to do with producing.
      if (known.contains("enable.metrics.push")) p.put("enable.metrics.push", "false");
      for (String[] kv : job.config) {
        String name = kv[0];
        String value = kv[1];
        if (name.equals("threads")) { // the driver's, not a producer property
          if (!value.matches("[1-9][0-9]?")) {
            throw new IllegalArgumentException("config \"threads\": want an integer in [1, 16], got " + Json.quote(value));
          }
          int t = Integer.parseInt(value);
          if (t > 16) throw new IllegalArgumentException("config \"threads\": want an integer in [1, 16], got " + Json.quote(value));
          job.threads = t;
          continue;
        }
        String mapped = ScenarioNames.map(name, value, known, p);
        if (mapped != null) continue; // a scenario field, applied (or ignored) by ScenarioNames
        if (!known.contains(name)) {
          throw new IllegalArgumentException("config \"" + name + "\": not a property of kafka-clients "
              + kafkaVersion());
        }
        if (name.equals(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG)) continue; // the job's bootstrap wins
        p.put(name, value);
      }
      p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, job.bootstrap);
      return p;
    }
  }

  /**
   * prodsim's scenario field names (wire/drivers.cc ScenarioNames, sent to
   * a --client=PATH driver) onto the Java client's properties. Returns null
   * for a name that is not a scenario field.
   */
  static final class ScenarioNames {
    static final Set<String> kIgnored = Set.of("return_successes", "return_errors", "flush_messages",
        "flush_max_messages", "channel_buffer_size", "metadata_retry_max", "metadata_retry_backoff", "version",
        "net_read_timeout");

    static String map(String name, String value, Set<String> known, Map<String, Object> p) {
      if (kIgnored.contains(name)) return "ignored";
      switch (name) {
        case "idempotent": p.put("enable.idempotence", bool(name, value)); return name;
        case "net_max_open_requests": p.put("max.in.flight.requests.per.connection", value); return name;
        case "required_acks":
          p.put("acks", value.equals("-1") ? "all" : value);
          return name;
        case "timeout": p.put("request.timeout.ms", ms(name, value)); return name;
        case "retry_max": p.put("retries", value); return name;
        case "retry_backoff": p.put("retry.backoff.ms", ms(name, value)); return name;
        case "flush_frequency": p.put("linger.ms", ms(name, value)); return name;
        case "flush_bytes": p.put("batch.size", value); return name;
        case "max_message_bytes": p.put("max.request.size", value); return name;
        case "net_dial_timeout":
          if (known.contains("socket.connection.setup.timeout.ms")) p.put("socket.connection.setup.timeout.ms", ms(name, value));
          return name;
        default: return null;
      }
    }

    static String bool(String name, String v) {
      if (!v.equals("true") && !v.equals("false")) throw new IllegalArgumentException("config \"" + name + "\": want true or false");
      return v;
    }

    static String ms(String name, String v) {
      if (!v.matches("(0|[1-9][0-9]{0,12})ms")) {
        throw new IllegalArgumentException("config \"" + name + "\": want milliseconds as \"<n>ms\", got " + Json.quote(v));
      }
      return v.substring(0, v.length() - 2);
    }
  }

  /** The `status` of an error report (README.md: the rule). */
  static final class Status {
    static String of(Exception ex) {
      return "possibly_persisted";
    }
  }
}
