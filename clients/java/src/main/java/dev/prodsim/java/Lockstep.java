package dev.prodsim.java;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * The lockstep scheduler: one baton, so that exactly one thread runs the
 * client's code at a time, and a simulated clock that moves only between
 * steps.
 *
 * <p>Participants are the application thread (the driver's, which calls
 * send() and closes), the producer's I/O thread (Kafka's Sender), which
 * registers itself at its first call into the driver's Time, Selectable or
 * KafkaClient, and, with the job's `threads` N > 1, the N sending threads,
 * which the application thread registers one after another (in index order)
 * and which yield the baton after each send() (yieldTurn: a round robin). A
 * participant runs only while it holds the baton and gives it back by parking
 * at a known point: a deadline on the simulated clock, a condition, or a
 * wakeup flag. The coordinator (the driver's main thread,
 * which reads the steps) hands the baton to the first runnable participant
 * in registration order, waits until it is back, and repeats until none is
 * runnable: that is the step's idle point, and the earliest deadline is its
 * next_ns.
 *
 * <p>A participant may also <em>detach</em> for a blocking call that ends
 * without further input (KafkaProducer.close joining the I/O thread): the
 * coordinator then keeps running the others and waits for it to reattach
 * rather than declaring the step idle.
 *
 * <p>Invariants: {@code current} is null (the coordinator's turn) or the one
 * participant that runs; the clock never goes backwards; a park releases the
 * monitor it waits on (Object.wait), so a participant parked inside a
 * synchronized method of the client holds no lock another needs.
 */
final class Lockstep {
  static final long NONE = Long.MAX_VALUE;

  static final class Part {
    final String name;
    final Object mon = new Object();
    Object waitMon;
    boolean parked;
    boolean detached;
    boolean gone;
    boolean woken;
    long deadlineNs = NONE;
    BooleanSupplier cond;

    Part(String name) {
      this.name = name;
    }
  }

  private final Object lock = new Object();
  private final List<Part> parts = new ArrayList<>();
  private final ThreadLocal<Part> self = new ThreadLocal<>();
  private volatile Part current;
  private volatile long nowNs;
  private final long seed;
  // Bound on baton hand-overs in one step: a client that never parks (a
  // spinning poll(0)) is a bug to report, not a hang.
  private static final long kTurnsPerStepMax = 10_000_000L;

  Lockstep(long seed) {
    this.seed = seed;
  }

  long nowNs() {
    return nowNs;
  }

  /** The calling thread's participant, or null (the coordinator, or a stranger). */
  Part self() {
    return self.get();
  }

  /**
   * Makes the calling thread a participant. The first participant (the
   * application) starts with the baton; a later one (the I/O thread, from
   * its first call into the driver) waits for it, runnable at once.
   */
  Part register(String name) {
    return register(name, null);
  }

  /**
   * As register(name); `added` runs once the participant is in the list,
   * before it waits for the baton (an application thread that starts
   * another waits for that, so that the list's order is its own).
   */
  Part register(String name, Runnable added) {
    Part p = new Part(name);
    self.set(p);
    Seeds.seedThread(Thread.currentThread(), seed, name);
    synchronized (lock) {
      parts.add(p);
      p.parked = true;
      p.woken = true;
      p.waitMon = p.mon;
      lock.notifyAll(); // for awaitParticipants
    }
    if (added != null) added.run();
    awaitBaton(p, p.mon);
    return p;
  }

  /**
   * The calling participant gives the baton back while still runnable, and
   * goes to the end of the list: the runnable participants before it run
   * first, then the others after it, in their order (a round robin of the
   * application's sending threads, with the I/O thread, registered earlier,
   * always before them).
   */
  void yieldTurn() {
    Part p = self.get();
    if (p == null) throw new IllegalStateException("yield from a thread outside the lockstep");
    synchronized (lock) {
      parts.remove(p);
      parts.add(p);
      p.parked = true;
      p.woken = true;
      p.deadlineNs = NONE;
      p.cond = null;
      p.waitMon = p.mon;
      current = null;
      lock.notifyAll();
    }
    awaitBaton(p, p.mon);
  }

  /** The I/O thread registers here on its first call into the driver. */
  Part ensureRegistered() {
    Part p = self.get();
    if (p != null) return p;
    if (!Thread.currentThread().getName().startsWith("kafka-producer-network-thread")) return null;
    return register("sender");
  }

  /** Waits (no clock involved) until `n` participants registered. */
  void awaitParticipants(int n) throws InterruptedException {
    synchronized (lock) {
      long giveUp = System.nanoTime() + 60_000_000_000L; // a hang guard, not a timing
      while (parts.size() < n) {
        if (System.nanoTime() > giveUp) throw new IllegalStateException("the producer's I/O thread never started");
        lock.wait(1000);
      }
    }
  }

  /**
   * Parks the calling participant until its deadline (absolute ns), `cond`
   * holds, or it is woken; waits on `waitMon` (releasing it) or its own
   * monitor.
   */
  void park(long deadlineNs, BooleanSupplier cond, Object waitMon) {
    Part p = self.get();
    if (p == null) throw new IllegalStateException("park from a thread outside the lockstep");
    Object m = waitMon != null ? waitMon : p.mon;
    synchronized (lock) {
      p.parked = true;
      p.deadlineNs = deadlineNs;
      p.cond = cond;
      p.waitMon = m;
      current = null;
      lock.notifyAll();
    }
    awaitBaton(p, m);
  }

  private void awaitBaton(Part p, Object m) {
    synchronized (m) {
      while (current != p) {
        try {
          m.wait();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted in the lockstep", e);
        }
      }
    }
    synchronized (lock) {
      p.parked = false;
      p.woken = false;
      p.cond = null;
      p.deadlineNs = NONE;
    }
  }

  /** Marks `p` runnable (a wakeup from another participant or the coordinator). */
  void wake(Part p) {
    if (p == null) return;
    synchronized (lock) {
      p.woken = true;
    }
  }

  /** Leaves the lockstep for a blocking call that ends without input. */
  void detach() {
    Part p = self.get();
    synchronized (lock) {
      p.detached = true;
      current = null;
      lock.notifyAll();
    }
  }

  void reattach() {
    Part p = self.get();
    synchronized (lock) {
      p.detached = false;
      p.parked = true;
      p.woken = true;
      p.waitMon = p.mon;
      lock.notifyAll();
    }
    awaitBaton(p, p.mon);
  }

  /** The calling participant ends: it gives the baton back for good. */
  void retire() {
    Part p = self.get();
    if (p == null) return;
    synchronized (lock) {
      p.gone = true;
      parts.remove(p);
      if (current == p) current = null;
      lock.notifyAll();
    }
    self.remove();
  }

  /**
   * The coordinator's step: sets the clock, then runs participants until
   * none is runnable. Returns the earliest pending deadline, or NONE.
   */
  long runStep(long stepNowNs, Runnable deliverInputs) throws InterruptedException {
    synchronized (lock) {
      while (current != null) lock.wait();
      if (stepNowNs < nowNs) throw new IllegalStateException("now_ns went backwards");
      nowNs = stepNowNs;
    }
    deliverInputs.run();
    long turns = 0;
    for (;;) {
      Part next = null;
      synchronized (lock) {
        for (;;) {
          while (current != null) lock.wait();
          next = pickRunnable();
          if (next != null) break;
          // A detached participant (closing, joining the I/O thread) comes
          // back without input once the others are done; while another
          // still waits for the clock (the I/O thread in a retry backoff),
          // the step ends and the clock must move first.
          boolean detached = false;
          boolean waiting = false;
          for (Part p : parts) {
            detached |= p.detached;
            waiting |= p.parked && !p.detached;
          }
          if (!detached || waiting) break;
          lock.wait();
        }
      }
      if (next == null) break;
      if (++turns > kTurnsPerStepMax) throw new IllegalStateException("the client never went idle in this step");
      synchronized (next.waitMon) {
        current = next;
        next.waitMon.notifyAll();
      }
    }
    return nextDeadline();
  }

  /** The earliest pending deadline after the clock, or NONE (between turns). */
  long nextDeadline() {
    synchronized (lock) {
      long next = NONE;
      for (Part p : parts) {
        if (p.parked && !p.detached && p.deadlineNs > nowNs) next = Math.min(next, p.deadlineNs);
      }
      return next;
    }
  }

  // REQUIRES: lock held, current == null. Conditions are the client's own
  // (they may take the client's monitors): nothing else runs meanwhile.
  private Part pickRunnable() {
    for (Part p : parts) {
      if (!p.parked || p.detached || p.gone) continue;
      if (p.woken || p.deadlineNs <= nowNs) return p;
      if (p.cond != null) {
        boolean holds;
        try {
          holds = p.cond.getAsBoolean();
        } catch (RuntimeException e) {
          holds = true; // let the participant see its exception
        }
        if (holds) return p;
      }
    }
    return null;
  }
}
