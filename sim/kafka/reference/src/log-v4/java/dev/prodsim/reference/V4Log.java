package dev.prodsim.reference;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.BatchMetadata;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.ProducerStateEntry;
import org.apache.kafka.storage.internals.log.UnifiedLog;

/**
 * One org.apache.kafka.storage.internals.log.UnifiedLog (Kafka 4.1 on). The
 * records' package is V4Records' business; what 4.4 changed in closing a log
 * is looked up by name (closeHandlers became closeQuietly, and LogManager's
 * shutdown gained prepareActiveSegmentForClose).
 */
final class V4Log implements PartitionLog {
    private final UnifiedLog log;

    V4Log(UnifiedLog log) {
        this.log = log;
    }

    @Override
    public long logEndOffset() {
        return log.logEndOffset();
    }

    @Override
    public long logStartOffset() {
        return log.logStartOffset();
    }

    @Override
    public long recoveryPoint() {
        return log.recoveryPoint();
    }

    /**
     * UnifiedLog.appendAsLeader(records, leaderEpoch, CLIENT) (Kafka's defaults for
     * the rest) -> append -> analyzeAndValidateRecords, LogValidator,
     * analyzeAndValidateProducerState.
     */
    @Override
    public Offsets appendAsLeader(Batch batch) {
        try {
            LogAppendInfo info = log.appendAsLeader(
                V4Records.build(batch, 0L, V4Records.NO_PARTITION_LEADER_EPOCH), 0, AppendOrigin.CLIENT);
            return new Offsets(info.firstOffset(), info.lastOffset());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** UnifiedLog.appendAsFollower(records, leaderEpoch 0) -> append with origin REPLICATION. */
    @Override
    public Offsets appendAsFollower(Batch batch, long baseOffset) {
        LogAppendInfo info = log.appendAsFollower(V4Records.build(batch, baseOffset, 0), 0);
        return new Offsets(info.firstOffset(), info.lastOffset());
    }

    /** UnifiedLog.truncateTo: LocalLog truncation, then loadProducerState(target). */
    @Override
    public void truncateTo(long offset) {
        log.truncateTo(offset);
    }

    /**
     * LogManager.shutdown: [4.4: prepareActiveSegmentForClose() (the active segment's
     * indexes trimmed as an inactive segment's),] flush(true), close() (a producer
     * snapshot at the log end).
     */
    @Override
    public void shutdownCleanly() {
        callIfPresent("prepareActiveSegmentForClose");
        log.flush(true);
        log.close();
        log.removeLogMetrics();
    }

    /**
     * closeHandlers (4.1 - 4.3) or closeQuietly (4.4): the segments' files closed,
     * no producer snapshot; what LogManager does to a log it gives up.
     */
    @Override
    public void abandon() {
        if (!callIfPresent("closeHandlers")) {
            callIfPresent("closeQuietly");
        }
        log.removeLogMetrics();
    }

    @Override
    public void removeExpiredProducers(long nowMs) {
        log.producerStateManager().removeExpiredProducers(nowMs);
    }

    @Override
    public List<Producer> producers() {
        TreeMap<Long, Producer> sorted = new TreeMap<>();
        for (Map.Entry<Long, ProducerStateEntry> e : log.producerStateManager().activeProducers().entrySet()) {
            List<CachedBatch> batches = new ArrayList<>();
            for (BatchMetadata b : e.getValue().batchMetadata()) {
                batches.add(V4Records.cached(b));
            }
            sorted.put(e.getKey(), new Producer(e.getKey(), e.getValue().producerEpoch(), batches));
        }
        return new ArrayList<>(sorted.values());
    }

    /** Calls the public no-argument method of that name on the log, if this Kafka has one. */
    private boolean callIfPresent(String name) {
        Method method;
        try {
            method = UnifiedLog.class.getMethod(name);
        } catch (NoSuchMethodException e) {
            return false;
        }
        Reflect.invoke(method, log);
        return true;
    }
}
