package dev.prodsim.java;

import java.util.Date;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The producer's BufferPool lock, with conditions on the lockstep's
 * simulated clock.
 *
 * <p>KafkaProducer.send() blocks in BufferPool.allocate when
 * `buffer.memory` is used up: it queues a Condition of the pool's
 * ReentrantLock and awaits it for at most `max.block.ms`, until the I/O
 * thread frees a batch (deallocate signals the first waiter) or the pool is
 * closed (signals them all). Condition.await would wait on the wall clock
 * while the waiting thread holds the lockstep's baton: the step would hang
 * until the wall-clock timeout. The driver puts this lock in the pool's
 * final `lock` field right after the producer is built (ProdsimFactory, before
 * any send): await releases the lock, parks the caller in the lockstep until
 * signalled or the simulated deadline passes, and takes the lock again.
 * Which waiter a deallocate wakes stays the pool's own choice (its FIFO
 * deque of conditions); when it runs is the lockstep's (list order).
 *
 * <p>Only await(long, TimeUnit), signal and signalAll are used by BufferPool
 * (2.6 to 4.4, javap); the rest refuse. The lock and unlock of the pool are
 * ReentrantLock's own: no participant parks while holding it except inside
 * await, which releases it, so taking it never blocks in lockstep.
 */
final class SimLock extends ReentrantLock {
  private final Lockstep ls;

  SimLock(Lockstep ls) {
    this.ls = ls;
  }

  @Override
  public Condition newCondition() {
    return new Cond();
  }

  final class Cond implements Condition {
    // Set under the lock by signal, read by the lockstep's coordinator
    // (the park's condition) between turns.
    private volatile boolean signalled;

    @Override
    public boolean await(long time, TimeUnit unit) {
      if (!isHeldByCurrentThread()) throw new IllegalMonitorStateException();
      if (ls.self() == null) throw new IllegalStateException("BufferPool await outside the lockstep");
      signalled = false;
      long ns = unit.toNanos(time);
      if (ns <= 0) return false;
      long now = ls.nowNs();
      long deadline = ns >= Lockstep.NONE - now ? Lockstep.NONE : now + ns;
      int holds = getHoldCount();
      for (int k = 0; k < holds; k++) unlock();
      try {
        ls.park(deadline, () -> signalled, null);
      } finally {
        for (int k = 0; k < holds; k++) {
          if (!tryLock()) throw new IllegalStateException("BufferPool lock held by a parked thread");
        }
      }
      boolean s = signalled;
      signalled = false;
      return s;
    }

    @Override
    public void signal() {
      if (!isHeldByCurrentThread()) throw new IllegalMonitorStateException();
      signalled = true;
    }

    @Override
    public void signalAll() {
      signal();
    }

    @Override
    public void await() {
      throw new UnsupportedOperationException("SimLock: await()");
    }

    @Override
    public void awaitUninterruptibly() {
      throw new UnsupportedOperationException("SimLock: awaitUninterruptibly()");
    }

    @Override
    public long awaitNanos(long nanosTimeout) {
      throw new UnsupportedOperationException("SimLock: awaitNanos()");
    }

    @Override
    public boolean awaitUntil(Date deadline) {
      throw new UnsupportedOperationException("SimLock: awaitUntil()");
    }
  }
}
