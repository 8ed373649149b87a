package dev.prodsim.java;

import java.util.function.Supplier;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.utils.Time;

/**
 * Kafka's Time on the lockstep's simulated clock. Reading it never waits;
 * sleep and waitObject park the calling thread in the lockstep until the
 * simulated clock reaches their deadline (or the condition holds). The I/O
 * thread's first call registers it (Lockstep.ensureRegistered).
 */
final class SimTime implements Time {
  private final Lockstep ls;

  SimTime(Lockstep ls) {
    this.ls = ls;
  }

  @Override
  public long milliseconds() {
    ls.ensureRegistered();
    return ls.nowNs() / 1_000_000L;
  }

  @Override
  public long hiResClockMs() {
    return milliseconds();
  }

  @Override
  public long nanoseconds() {
    ls.ensureRegistered();
    return ls.nowNs();
  }

  @Override
  public void sleep(long ms) {
    ls.ensureRegistered();
    if (ms <= 0) return;
    ls.park(satAdd(ls.nowNs(), ms), null, null);
  }

  // Time.waitObject is new in 2.3 (no @Override: 2.2's Time lacks it).
  public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) throws InterruptedException {
    ls.ensureRegistered();
    for (;;) {
      if (condition.get()) return;
      long nowMs = ls.nowNs() / 1_000_000L;
      if (nowMs >= deadlineMs) throw new TimeoutException("Condition not satisfied before deadline");
      long deadlineNs = deadlineMs >= Long.MAX_VALUE / 1_000_000L ? Lockstep.NONE : deadlineMs * 1_000_000L;
      ls.park(deadlineNs, () -> condition.get(), obj);
    }
  }

  static long satAdd(long nowNs, long ms) {
    if (ms >= (Long.MAX_VALUE - nowNs) / 1_000_000L) return Lockstep.NONE;
    return nowNs + ms * 1_000_000L;
  }
}
