package dev.prodsim.reference;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import kafka.log.UnifiedLog;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.BatchMetadata;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.ProducerStateEntry;

/**
 * One kafka.log.UnifiedLog (Kafka 3.9 - 4.0). The append methods' parameters
 * moved inside the line (appendAsLeader lost its MetadataVersion in 4.0;
 * appendAsFollower gained a leader epoch in 3.9.1), so they are called by
 * reflection, with Kafka's own defaults (the Scala default-argument getters)
 * for everything after the origin.
 */
final class V3Log implements PartitionLog {
    private final UnifiedLog log;
    private final Method appendAsLeader;
    /** appendAsLeader's default-argument getters, for its parameters after the origin. */
    private final Method[] appendAsLeaderDefaults;
    private final Method appendAsFollower;

    V3Log(UnifiedLog log) {
        this.log = log;
        this.appendAsLeader = widest(UnifiedLog.class, "appendAsLeader");
        this.appendAsLeaderDefaults = new Method[appendAsLeader.getParameterCount() - 3];
        for (int i = 0; i < appendAsLeaderDefaults.length; i++) {
            appendAsLeaderDefaults[i] = Reflect.method(UnifiedLog.class, "appendAsLeader$default$" + (i + 4), 0);
        }
        this.appendAsFollower = widest(UnifiedLog.class, "appendAsFollower");
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
     * UnifiedLog.appendAsLeader(records, leaderEpoch 0, CLIENT, defaults...) ->
     * append -> analyzeAndValidateRecords, LogValidator, analyzeAndValidateProducerState.
     */
    @Override
    public Offsets appendAsLeader(Batch batch) {
        Object[] args = new Object[appendAsLeader.getParameterCount()];
        args[0] = records(batch, 0L, RecordBatch.NO_PARTITION_LEADER_EPOCH);
        args[1] = 0;
        args[2] = AppendOrigin.CLIENT;
        for (int i = 3; i < args.length; i++) {
            args[i] = Reflect.invoke(appendAsLeaderDefaults[i - 3], log);
        }
        LogAppendInfo info = (LogAppendInfo) Reflect.invoke(appendAsLeader, log, args);
        return new Offsets(info.firstOffset(), info.lastOffset());
    }

    /** UnifiedLog.appendAsFollower(records[, leaderEpoch 0]) -> append with origin REPLICATION. */
    @Override
    public Offsets appendAsFollower(Batch batch, long baseOffset) {
        MemoryRecords records = records(batch, baseOffset, 0);
        LogAppendInfo info = (LogAppendInfo) (appendAsFollower.getParameterCount() == 1
            ? Reflect.invoke(appendAsFollower, log, records)
            : Reflect.invoke(appendAsFollower, log, records, 0));
        return new Offsets(info.firstOffset(), info.lastOffset());
    }

    /** UnifiedLog.truncateTo: LocalLog truncation, then loadProducerState(target). */
    @Override
    public void truncateTo(long offset) {
        log.truncateTo(offset);
    }

    /** LogManager.shutdown: log.flush(true); log.close() (close takes a producer snapshot). */
    @Override
    public void shutdownCleanly() {
        log.flush(true);
        log.close();
        log.removeLogMetrics();
    }

    /** UnifiedLog.closeHandlers: what LogManager does to a log of a failed directory; no snapshot. */
    @Override
    public void abandon() {
        log.closeHandlers();
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
                batches.add(new CachedBatch(b.firstSeq(), b.lastSeq, b.firstOffset(), b.lastOffset));
            }
            sorted.put(e.getKey(), new Producer(e.getKey(), e.getValue().producerEpoch(), batches));
        }
        return new ArrayList<>(sorted.values());
    }

    /** One uncompressed magic-v2 batch, CreateTime = the batch's timestamp, values "v<n>". */
    private static MemoryRecords records(Batch batch, long baseOffset, int partitionLeaderEpoch) {
        SimpleRecord[] records = new SimpleRecord[batch.count()];
        for (int i = 0; i < records.length; i++) {
            records[i] = new SimpleRecord(batch.timestampMs(), null, ("v" + (batch.firstValue() + i)).getBytes());
        }
        MemoryRecords built = MemoryRecords.withRecords(RecordBatch.MAGIC_VALUE_V2, baseOffset, Compression.NONE,
            TimestampType.CREATE_TIME, batch.producerId(), BatchBytes.buildableEpoch(batch),
            BatchBytes.buildableSequence(batch), partitionLeaderEpoch, false, records);
        if (BatchBytes.needsPatch(batch)) {
            BatchBytes.patch(built.buffer(), batch);
        }
        return built;
    }

    /** The overload of that name with the most parameters. */
    private static Method widest(Class<?> type, String name) {
        Method widest = null;
        for (Method m : type.getMethods()) {
            if (m.getName().equals(name) && (widest == null || m.getParameterCount() > widest.getParameterCount())) {
                widest = m;
            }
        }
        if (widest == null) {
            throw new IllegalStateException("no UnifiedLog." + name + " in this Kafka");
        }
        return widest;
    }
}
