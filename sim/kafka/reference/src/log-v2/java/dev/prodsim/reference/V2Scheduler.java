package dev.prodsim.reference;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import kafka.utils.Scheduler;
import scala.Function0;
import scala.runtime.BoxedUnit;

/** kafka.utils.Scheduler over PendingTasks: periodic tasks never run, one-shot ones after the command. */
final class V2Scheduler implements Scheduler {
    private final PendingTasks tasks;

    V2Scheduler(PendingTasks tasks) {
        this.tasks = tasks;
    }

    @Override
    public void startup() {}

    @Override
    public void shutdown() {}

    @Override
    public boolean isStarted() {
        return true;
    }

    @Override
    public ScheduledFuture<?> schedule(String name, Function0<BoxedUnit> fun, long delay, long period, TimeUnit unit) {
        return tasks.schedule(fun::apply, period);
    }
}
