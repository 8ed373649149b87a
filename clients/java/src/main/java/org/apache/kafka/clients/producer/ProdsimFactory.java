package org.apache.kafka.clients.producer;

import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.clients.KafkaClient;
import org.apache.kafka.clients.Metadata;
import org.apache.kafka.common.internals.ClusterResourceListeners;
import org.apache.kafka.common.network.Selectable;
import org.apache.kafka.common.utils.Time;

/**
 * Builds the real KafkaProducer through its package-private constructor that
 * takes a Time and a KafkaClient (the one Kafka's own KafkaProducerTest
 * uses), with Kafka's real NetworkClient over a given Selectable.
 *
 * <p>The constructor differs by version: 2.x before 2.8 takes the config as
 * a Map, 2.8 to 3.x a ProducerConfig, 4.x also an ApiVersions; 2.2 a
 * Metadata where later versions take a ProducerMetadata (new in 2.3); NetworkClient's
 * and ProducerMetadata's constructors differ too (ClientDnsLookup until 2.8,
 * connection-setup timeouts from 2.8, MetadataRecoveryStrategy from 3.8,
 * BootstrapConfiguration in 4.4, a retry.backoff.max.ms from 3.7, no Time in
 * 4.4's ProducerMetadata; LogContext's package in 4.4). So everything here is
 * reflective, chosen by parameter types, one source for every version.
 *
 * <p>Order: the producer is built first with a KafkaClient proxy whose
 * delegate is not set yet, then the NetworkClient with the producer's own
 * ApiVersions (before 4.x the constructor makes its own, which its
 * RecordAccumulator and TransactionManager read: the NetworkClient must fill
 * that one, as in the producer's normal path) and the delegate is set. The
 * producer's I/O thread starts inside the constructor; its first call into
 * the driver (Time, Selectable or this proxy) parks it in the lockstep until
 * the application thread gives the baton away, so it cannot see the proxy
 * without its delegate.
 */
public final class ProdsimFactory {
  private ProdsimFactory() {}

  /** What the driver needs of the built producer. */
  public static final class Built {
    public KafkaProducer<byte[], byte[]> producer;
    public Metadata metadata; // a ProducerMetadata from 2.3, a Metadata in 2.2
    public Topics topics;
    public Object transactionManager; // null unless idempotent or transactional
  }

  /** Proxy's handler: forwards to the delegate once set. */
  static final class Forward implements InvocationHandler {
    volatile KafkaClient delegate;
    final Runnable gate;

    Forward(Runnable gate) {
      this.gate = gate;
    }

    @Override
    public Object invoke(Object proxy, Method m, Object[] args) throws Throwable {
      if (m.getDeclaringClass() == Object.class) {
        switch (m.getName()) {
          case "hashCode": return System.identityHashCode(proxy);
          case "equals": return proxy == args[0];
          default: return "ProdsimKafkaClient";
        }
      }
      gate.run();
      KafkaClient d = delegate;
      if (d == null) throw new IllegalStateException("KafkaClient used before it was built: " + m.getName());
      try {
        return m.invoke(d, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }
  }

  public static Built build(Map<String, Object> props, Selectable selector, Time time, Runnable gate,
                            long seed) throws Exception {
    ProducerConfig config = new ProducerConfig(props);
    String clientId = config.getString(ProducerConfig.CLIENT_ID_CONFIG);
    Object logContext = newLogContext("[Producer clientId=" + clientId + "] ");
    Metadata metadata = newMetadata(config, logContext, time);
    List<InetSocketAddress> addresses = new ArrayList<>();
    for (String hp : config.getList(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG)) {
      int colon = hp.lastIndexOf(':');
      addresses.add(new InetSocketAddress(hp.substring(0, colon), Integer.parseInt(hp.substring(colon + 1))));
    }
    bootstrap(metadata, addresses, time);

    Forward fwd = new Forward(gate);
    KafkaClient client = (KafkaClient) Proxy.newProxyInstance(ProdsimFactory.class.getClassLoader(),
        new Class<?>[] {KafkaClient.class}, fwd);
    ApiVersions given = new ApiVersions();

    Constructor<?> pc = null;
    for (Constructor<?> c : KafkaProducer.class.getDeclaredConstructors()) {
      Class<?>[] t = c.getParameterTypes();
      if (t.length >= 7 && t.length <= 8 && t[4] == KafkaClient.class && t[t.length - 1] == Time.class) pc = c;
    }
    if (pc == null) throw new IllegalStateException("no KafkaProducer constructor taking a KafkaClient and a Time");
    Class<?>[] pt = pc.getParameterTypes();
    Object[] pargs = new Object[pt.length];
    for (int k = 0; k < pt.length; k++) {
      Class<?> t = pt[k];
      if (t == Map.class) pargs[k] = props;
      else if (t == ProducerConfig.class) pargs[k] = config;
      else if (Metadata.class.isAssignableFrom(t)) pargs[k] = metadata; // ProducerMetadata; Metadata in 2.2
      else if (t == KafkaClient.class) pargs[k] = client;
      else if (t == ApiVersions.class) pargs[k] = given;
      else if (t == Time.class) pargs[k] = time;
      else pargs[k] = null; // serializers and interceptors: from the config
    }
    pc.setAccessible(true);
    @SuppressWarnings("unchecked")
    KafkaProducer<byte[], byte[]> producer = (KafkaProducer<byte[], byte[]>) pc.newInstance(pargs);

    orderIncompleteBatches(producer);
    ApiVersions apiVersions = (ApiVersions) field(producer, "apiVersions");
    ProducerConfig used = (ProducerConfig) field(producer, "producerConfig");
    KafkaClient nc = newNetworkClient(used, selector, metadata, clientId, apiVersions, time, logContext);
    Field rand = nc.getClass().getDeclaredField("randOffset");
    rand.setAccessible(true);
    rand.set(nc, new Random(seed ^ 0x6c6561737431L));
    fwd.delegate = nc;

    Built b = new Built();
    b.producer = producer;
    b.metadata = metadata;
    b.topics = new Topics(metadata);
    b.transactionManager = field(producer, "transactionManager");
    return b;
  }

  /**
   * RecordAccumulator's IncompleteBatches keeps its batches in a HashSet of
   * ProducerBatch, which hashes by identity: the order in which a forced
   * close aborts them (the order of its error lines) would follow identity
   * hash codes, which depend on everything the JVM hashed before (its start,
   * a class-data-sharing archive, the JDK build). An insertion-ordered set
   * (batch creation order) in its place, set before any batch exists, makes
   * that order the client's own. IncompleteBatches locks on the set itself,
   * so the new one is its lock from the start.
   */
  @SuppressWarnings("unchecked")
  static void orderIncompleteBatches(KafkaProducer<?, ?> producer) throws ReflectiveOperationException {
    Object accumulator = field(producer, "accumulator");
    Object incomplete = field(accumulator, "incomplete");
    Field set = incomplete.getClass().getDeclaredField("incomplete");
    set.setAccessible(true);
    java.util.Set<Object> old = (java.util.Set<Object>) set.get(incomplete);
    if (!old.isEmpty()) throw new IllegalStateException("IncompleteBatches not empty at creation");
    set.set(incomplete, new java.util.LinkedHashSet<Object>());
  }

  /**
   * Puts `lock` in the place of the BufferPool's ReentrantLock (the
   * accumulator's `free`, its final field `lock`), before any send: the
   * driver's SimLock, whose conditions wait on the simulated clock
   * (send() blocking on a full buffer.memory stays in the lockstep).
   */
  public static void replaceBufferPoolLock(KafkaProducer<?, ?> producer, java.util.concurrent.locks.ReentrantLock lock)
      throws ReflectiveOperationException {
    Object accumulator = field(producer, "accumulator");
    Object pool = field(accumulator, "free");
    Field f = pool.getClass().getDeclaredField("lock");
    f.setAccessible(true);
    java.util.concurrent.locks.ReentrantLock old = (java.util.concurrent.locks.ReentrantLock) f.get(pool);
    if (old.isLocked() || old.hasQueuedThreads()) throw new IllegalStateException("BufferPool lock in use at creation");
    f.set(pool, lock);
  }

  static Object field(Object o, String name) throws ReflectiveOperationException {
    Field f = o.getClass().getDeclaredField(name);
    f.setAccessible(true);
    return f.get(o);
  }

  static Object newLogContext(String prefix) throws ReflectiveOperationException {
    Class<?> c;
    try {
      c = Class.forName("org.apache.kafka.common.utils.internals.LogContext");
    } catch (ClassNotFoundException e) {
      c = Class.forName("org.apache.kafka.common.utils.LogContext");
    }
    return c.getConstructor(String.class).newInstance(prefix);
  }

  /**
   * The producer's metadata as KafkaProducer's constructor makes it:
   * ProducerMetadata(refreshBackoffMs, [refreshBackoffMaxMs 3.7+,]
   * metadataExpireMs, [metadataIdleMs 2.5+,] LogContext,
   * ClusterResourceListeners, [Time before 4.4]) from 2.3; in 2.2 there is
   * no ProducerMetadata: Metadata(refreshBackoffMs, metadataExpireMs,
   * allowAutoTopicCreation true, topicExpiryEnabled true, listeners).
   */
  static Metadata newMetadata(ProducerConfig config, Object logContext, Time time) throws Exception {
    Class<?> pm;
    try {
      pm = Class.forName("org.apache.kafka.clients.producer.internals.ProducerMetadata");
    } catch (ClassNotFoundException e) {
      return newMetadata22(config);
    }
    Constructor<?> mc = pm.getConstructors()[0];
    for (Constructor<?> c : pm.getConstructors()) {
      if (c.getParameterCount() > mc.getParameterCount()) mc = c;
    }
    Class<?>[] t = mc.getParameterTypes();
    int longs = 0;
    for (Class<?> x : t) if (x == long.class) longs++;
    List<Object> a = new ArrayList<>();
    a.add(config.getLong(ProducerConfig.RETRY_BACKOFF_MS_CONFIG));
    if (longs == 4) a.add(config.getLong("retry.backoff.max.ms"));
    a.add(config.getLong(ProducerConfig.METADATA_MAX_AGE_CONFIG));
    if (longs >= 3) a.add(config.getLong("metadata.max.idle.ms")); // 2.5+
    a.add(logContext);
    a.add(new ClusterResourceListeners());
    if (t[t.length - 1] == Time.class) a.add(time);
    if (a.size() != t.length) throw new IllegalStateException("unexpected ProducerMetadata constructor " + mc);
    return (Metadata) mc.newInstance(a.toArray());
  }

  static Metadata newMetadata22(ProducerConfig config) throws Exception {
    Constructor<Metadata> mc = Metadata.class.getConstructor(long.class, long.class, boolean.class, boolean.class,
        ClusterResourceListeners.class);
    return mc.newInstance(config.getLong(ProducerConfig.RETRY_BACKOFF_MS_CONFIG),
        config.getLong(ProducerConfig.METADATA_MAX_AGE_CONFIG), true, true, new ClusterResourceListeners());
  }

  /** Metadata.bootstrap(addresses) from 2.4, bootstrap(addresses, nowMs) before. */
  static void bootstrap(Metadata metadata, List<InetSocketAddress> addresses, Time time) throws Exception {
    Method m;
    try {
      m = Metadata.class.getMethod("bootstrap", List.class);
    } catch (NoSuchMethodException e) {
      m = Metadata.class.getMethod("bootstrap", List.class, long.class);
      m.invoke(metadata, addresses, time.milliseconds());
      return;
    }
    m.invoke(metadata, addresses);
  }

  /**
   * What KafkaProducer.waitOnMetadata calls to ask for a topic, by version:
   * ProducerMetadata.add(topic, nowMs) and requestUpdateForTopic(topic) from
   * 2.5; add(topic) and requestUpdate() before (ProducerMetadata in 2.3 and
   * 2.4, Metadata in 2.2). Looked up once.
   */
  public static final class Topics {
    private final Metadata m;
    private final Method add;
    private final boolean addTakesNow;
    private final Method request;
    private final boolean requestTakesTopic;

    Topics(Metadata m) throws NoSuchMethodException {
      this.m = m;
      Method a;
      boolean now = true;
      try {
        a = m.getClass().getMethod("add", String.class, long.class);
      } catch (NoSuchMethodException e) {
        a = m.getClass().getMethod("add", String.class);
        now = false;
      }
      Method r;
      boolean topic = true;
      try {
        r = m.getClass().getMethod("requestUpdateForTopic", String.class);
      } catch (NoSuchMethodException e) {
        r = m.getClass().getMethod("requestUpdate");
        topic = false;
      }
      add = a;
      addTakesNow = now;
      request = r;
      requestTakesTopic = topic;
    }

    public void add(String topic, long nowMs) {
      call(add, addTakesNow ? new Object[] {topic, nowMs} : new Object[] {topic});
    }

    public int requestUpdateForTopic(String topic) {
      return (Integer) call(request, requestTakesTopic ? new Object[] {topic} : new Object[0]);
    }

    private Object call(Method x, Object[] args) {
      try {
        return x.invoke(m, args);
      } catch (InvocationTargetException e) {
        Throwable c = e.getCause();
        if (c instanceof RuntimeException) throw (RuntimeException) c;
        if (c instanceof Error) throw (Error) c;
        throw new IllegalStateException(c);
      } catch (IllegalAccessException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  /**
   * NetworkClient(Selectable, Metadata, clientId, ...) with the values
   * KafkaProducer's own path (newSender / ClientUtils.createNetworkClient)
   * gives, filled by type and order; no throttle-time sensor (metrics only),
   * no telemetry sender, BootstrapConfiguration DISABLED (the metadata is
   * bootstrapped above, as Kafka's tests do).
   */
  static KafkaClient newNetworkClient(ProducerConfig config, Selectable selector, Metadata metadata,
                                      String clientId, ApiVersions apiVersions, Time time, Object logContext)
      throws Exception {
    Constructor<?> best = null;
    for (Constructor<?> c : Class.forName("org.apache.kafka.clients.NetworkClient").getConstructors()) {
      Class<?>[] t = c.getParameterTypes();
      if (t.length < 3 || t[0] != Selectable.class || t[1] != Metadata.class) continue;
      boolean sensor = false;
      for (Class<?> x : t) sensor |= x.getName().endsWith(".Sensor");
      if (sensor) continue;
      if (best == null || t.length < best.getParameterCount()) best = c;
    }
    if (best == null) throw new IllegalStateException("no NetworkClient(Selectable, Metadata, ...) constructor");
    long[] numbers = {
        config.getInt(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION),
        config.getLong(ProducerConfig.RECONNECT_BACKOFF_MS_CONFIG),
        config.getLong(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG),
        config.getInt(ProducerConfig.SEND_BUFFER_CONFIG),
        config.getInt(ProducerConfig.RECEIVE_BUFFER_CONFIG),
        config.getInt(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG),
        optLong(config, "socket.connection.setup.timeout.ms"),
        optLong(config, "socket.connection.setup.timeout.max.ms"),
    };
    Class<?>[] t = best.getParameterTypes();
    Object[] a = new Object[t.length];
    int num = 0;
    boolean afterTime = false;
    boolean discoverSet = false;
    boolean afterLogContext = false;
    for (int k = 0; k < t.length; k++) {
      Class<?> x = t[k];
      String n = x.getName();
      if (k == 0) a[k] = selector;
      else if (k == 1) a[k] = metadata;
      else if (x == String.class) a[k] = clientId;
      else if (!afterTime && x == int.class) a[k] = (int) numbers[num++];
      else if (!afterTime && x == long.class) a[k] = numbers[num++];
      else if (x == Time.class) { a[k] = time; afterTime = true; }
      else if (x == boolean.class && !discoverSet) { a[k] = true; discoverSet = true; }
      else if (x == boolean.class) a[k] = optBool(config, "metadata.cluster.check.enable");
      else if (x == ApiVersions.class) a[k] = apiVersions;
      else if (n.endsWith(".LogContext")) { a[k] = logContext; afterLogContext = true; }
      else if (x == long.class && afterLogContext) a[k] = optLong(config, "metadata.recovery.rebootstrap.trigger.ms");
      else if (n.endsWith(".ClientDnsLookup")) {
        a[k] = x.getMethod("forConfig", String.class).invoke(null, config.getString("client.dns.lookup"));
      } else if (n.endsWith(".MetadataRecoveryStrategy")) {
        a[k] = x.getMethod("forName", String.class).invoke(null, config.getString("metadata.recovery.strategy"));
      } else if (n.endsWith(".BootstrapConfiguration")) {
        a[k] = x.getField("DISABLED").get(null);
      } else {
        throw new IllegalStateException("NetworkClient parameter " + k + " of type " + n + " unknown to the driver");
      }
    }
    return (KafkaClient) best.newInstance(a);
  }

  static long optLong(ProducerConfig config, String name) {
    return config.values().containsKey(name) ? config.getLong(name) : 0L;
  }

  static boolean optBool(ProducerConfig config, String name) {
    return config.values().containsKey(name) ? config.getBoolean(name) : false;
  }

  /** The producer's TransactionManager: is it in a fatal state, and why. */
  public static Throwable fatalError(Object transactionManager) {
    if (transactionManager == null) return null;
    try {
      Method has = transactionManager.getClass().getDeclaredMethod("hasFatalError");
      has.setAccessible(true);
      if (!(Boolean) has.invoke(transactionManager)) return null;
      Method last = transactionManager.getClass().getDeclaredMethod("lastError");
      last.setAccessible(true);
      Object e = last.invoke(transactionManager);
      return e instanceof Throwable ? (Throwable) e : new IllegalStateException("fatal");
    } catch (ReflectiveOperationException e) {
      return null;
    }
  }
}
