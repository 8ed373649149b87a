package dev.prodsim.reference;

import java.util.ArrayDeque;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The work Kafka hands its scheduler. Periodic tasks (the producer-expiration
 * check, ...) never run: expiry happens only on the protocol's expire. One-shot
 * tasks (deleting truncated segments and snapshots, flushing after a roll)
 * run after the command that scheduled them, in order, whatever their delay.
 */
final class PendingTasks {
    private final ArrayDeque<Runnable> oneShot = new ArrayDeque<>();

    /** What each generation's Scheduler.schedule does with a task. */
    ScheduledFuture<?> schedule(Runnable task, long periodMs) {
        if (periodMs <= 0) {
            oneShot.add(task);
        }
        return new InertFuture();
    }

    void runAll() {
        Runnable task;
        while ((task = oneShot.poll()) != null) {
            task.run();
        }
    }

    void clear() {
        oneShot.clear();
    }

    /** The handle Kafka keeps for a scheduled task (it only ever cancels it). */
    private static final class InertFuture implements ScheduledFuture<Object> {
        private boolean cancelled;

        @Override
        public long getDelay(TimeUnit unit) {
            return Long.MAX_VALUE;
        }

        @Override
        public int compareTo(Delayed other) {
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            cancelled = true;
            return true;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean isDone() {
            return cancelled;
        }

        @Override
        public Object get() {
            throw new IllegalStateException("a task under the manual scheduler never completes");
        }

        @Override
        public Object get(long timeout, TimeUnit unit) {
            return get();
        }
    }
}
