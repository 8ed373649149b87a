package dev.prodsim.reference;

import java.util.concurrent.ScheduledFuture;
import org.apache.kafka.server.util.Scheduler;

/** org.apache.kafka.server.util.Scheduler over PendingTasks: periodic tasks never run, one-shot ones after the command. */
final class V3Scheduler implements Scheduler {
    private final PendingTasks tasks;

    V3Scheduler(PendingTasks tasks) {
        this.tasks = tasks;
    }

    @Override
    public void startup() {}

    @Override
    public void shutdown() {}

    @Override
    public ScheduledFuture<?> schedule(String name, Runnable task, long delayMs, long periodMs) {
        return tasks.schedule(task, periodMs);
    }

    @Override
    public void resizeThreadPool(int newSize) {}
}
