package dev.prodsim.java;

import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;

/**
 * Seeding from PRODSIM_SEED.
 *
 * <p>The producer draws from ThreadLocalRandom (the sticky partitioner of
 * null keys; reconnect-backoff jitter in ClusterConnectionStates and, from
 * 3.x, ExponentialBackoff) and from NetworkClient's own java.util.Random
 * (leastLoadedNode's offset). ThreadLocalRandom has no seed to set: its
 * per-thread state lives in java.lang.Thread (threadLocalRandomSeed, and a
 * non-zero threadLocalRandomProbe marks it initialised). The driver writes
 * both, through sun.misc.Unsafe (module jdk.unsupported, no --add-opens
 * needed), for each lockstep thread before it runs client code, from the seed
 * and the thread's role.
 *
 * <p>Kafka's Cluster shuffles its node list (Collections.shuffle(List), the
 * JDK's one shared, unseeded java.util.Random in Collections.r), and
 * NetworkClient.leastLoadedNode walks that list: which broker the client
 * dials first depends on it. seedCollections puts a seeded Random there.
 */
final class Seeds {
  private Seeds() {}

  static long mix(long seed, String role) {
    long h = seed ^ 0x9E3779B97F4A7C15L;
    for (byte b : role.getBytes(StandardCharsets.UTF_8)) {
      h = (h ^ b) * 0x100000001B3L;
      h ^= h >>> 29;
    }
    h *= 0xBF58476D1CE4E5B9L;
    h ^= h >>> 31;
    return h;
  }

  private static sun.misc.Unsafe unsafe() throws ReflectiveOperationException {
    Field uf = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
    uf.setAccessible(true);
    return (sun.misc.Unsafe) uf.get(null);
  }

  /** Seeds java.util.Collections' shared Random (Collections.shuffle(List)). */
  @SuppressWarnings("deprecation")
  static void seedCollections(long seed) {
    try {
      sun.misc.Unsafe u = unsafe();
      Field r = java.util.Collections.class.getDeclaredField("r");
      if (r.getType() != java.util.Random.class) throw new IllegalStateException("Collections.r is a " + r.getType());
      u.putObjectVolatile(u.staticFieldBase(r), u.staticFieldOffset(r), new java.util.Random(mix(seed, "collections")));
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new IllegalStateException("cannot seed Collections.shuffle: " + e, e);
    }
  }

  static void seedThread(Thread t, long seed, String role) {
    try {
      sun.misc.Unsafe u = unsafe();
      Field s = Thread.class.getDeclaredField("threadLocalRandomSeed");
      Field p = Thread.class.getDeclaredField("threadLocalRandomProbe");
      Field s2 = Thread.class.getDeclaredField("threadLocalRandomSecondarySeed");
      @SuppressWarnings("deprecation")
      long so = u.objectFieldOffset(s);
      @SuppressWarnings("deprecation")
      long po = u.objectFieldOffset(p);
      @SuppressWarnings("deprecation")
      long s2o = u.objectFieldOffset(s2);
      long v = mix(seed, role);
      u.putLong(t, so, v);
      int probe = (int) (v >>> 32) | 1;
      u.putInt(t, po, probe);
      u.putInt(t, s2o, (int) v | 1);
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new IllegalStateException("cannot seed ThreadLocalRandom: " + e, e);
    }
  }
}
