package dev.prodsim.reference;

import java.util.function.Supplier;
import org.apache.kafka.common.utils.Time;

/** Kafka's clock for the log: it only moves when the protocol says advance. */
final class ManualTime implements Time {
    private long nowMs;

    void advance(long ms) {
        nowMs += ms;
    }

    void reset() {
        nowMs = 0;
    }

    @Override
    public long milliseconds() {
        return nowMs;
    }

    @Override
    public long nanoseconds() {
        return nowMs * 1_000_000L;
    }

    /** Kafka's log code does not sleep on the paths driven here; time stays put. */
    @Override
    public void sleep(long ms) {}

    /** Abstract before 4.x, a default method after: no @Override so one source fits both. */
    public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
        if (!condition.get()) {
            throw new IllegalStateException("Kafka waited on an object under the manual clock");
        }
    }
}
