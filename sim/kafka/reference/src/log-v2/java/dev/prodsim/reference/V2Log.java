package dev.prodsim.reference;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import kafka.api.ApiVersion;
import kafka.log.AppendOrigin;
import kafka.log.BatchMetadata;
import kafka.log.Log;
import kafka.log.LogAppendInfo;
import kafka.log.ProducerStateEntry;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/** One kafka.log.Log (Kafka 2.4 - 2.8). */
final class V2Log implements PartitionLog {
    private final Log log;

    V2Log(Log log) {
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

    /** Log.appendAsLeader -> append -> analyzeAndValidateRecords, LogValidator, analyzeAndValidateProducerState. */
    @Override
    public Offsets appendAsLeader(Batch batch) {
        LogAppendInfo info = log.appendAsLeader(records(batch, 0L, RecordBatch.NO_PARTITION_LEADER_EPOCH), 0,
            AppendOrigin.Client$.MODULE$, ApiVersion.latestVersion());
        return new Offsets(offset(info.firstOffset()), info.lastOffset());
    }

    /** Log.appendAsFollower -> append with origin Replication (no sequence checks) at the batch's own offsets. */
    @Override
    public Offsets appendAsFollower(Batch batch, long baseOffset) {
        LogAppendInfo info = log.appendAsFollower(records(batch, baseOffset, 0));
        return new Offsets(offset(info.firstOffset()), info.lastOffset());
    }

    /** Log.truncateTo: truncates segments, then loadProducerState(target, reloadFromCleanShutdown = false). */
    @Override
    public void truncateTo(long offset) {
        log.truncateTo(offset);
    }

    /** LogManager.shutdown: log.flush(); log.close() (close takes a producer snapshot at the log end). */
    @Override
    public void shutdownCleanly() {
        log.flush();
        log.close();
        log.removeLogMetrics();
    }

    /** Log.closeHandlers: what LogManager does to a log of a failed directory; no snapshot. */
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
        Map<Object, ProducerStateEntry> active = CollectionConverters.asJava(log.producerStateManager().activeProducers());
        TreeMap<Long, Producer> sorted = new TreeMap<>();
        for (Map.Entry<Object, ProducerStateEntry> e : active.entrySet()) {
            long producerId = (Long) e.getKey();
            List<CachedBatch> batches = new ArrayList<>();
            for (BatchMetadata b : CollectionConverters.asJava(e.getValue().batchMetadata())) {
                batches.add(new CachedBatch(b.firstSeq(), b.lastSeq(), b.firstOffset(), b.lastOffset()));
            }
            sorted.put(producerId, new Producer(producerId, e.getValue().producerEpoch(), batches));
        }
        return new ArrayList<>(sorted.values());
    }

    /** One uncompressed magic-v2 batch, CreateTime = the batch's timestamp, values "v<n>". */
    private static MemoryRecords records(Batch batch, long baseOffset, int partitionLeaderEpoch) {
        SimpleRecord[] records = new SimpleRecord[batch.count()];
        for (int i = 0; i < records.length; i++) {
            records[i] = new SimpleRecord(batch.timestampMs(), null, ("v" + (batch.firstValue() + i)).getBytes());
        }
        MemoryRecords built = MemoryRecords.withRecords(RecordBatch.MAGIC_VALUE_V2, baseOffset, CompressionType.NONE,
            TimestampType.CREATE_TIME, batch.producerId(), BatchBytes.buildableEpoch(batch),
            BatchBytes.buildableSequence(batch), partitionLeaderEpoch, false, records);
        if (BatchBytes.needsPatch(batch)) {
            BatchBytes.patch(built.buffer(), batch);
        }
        return built;
    }

    /** LogAppendInfo.firstOffset: Option[Long] before 2.8, Option[LogOffsetMetadata] in 2.8. */
    private static long offset(Option<?> first) {
        if (first.isEmpty()) {
            return -1L;
        }
        Object value = first.get();
        if (value instanceof Long l) {
            return l;
        }
        return (Long) Reflect.invoke(Reflect.method(value.getClass(), "messageOffset", 0), value);
    }
}
