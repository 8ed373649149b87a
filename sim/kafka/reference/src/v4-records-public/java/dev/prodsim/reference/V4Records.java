package dev.prodsim.reference;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.storage.internals.log.BatchMetadata;

/**
 * Kafka 4.1 - 4.2: records in org.apache.kafka.common.record,
 * BatchMetadata with public fields. (src/v4-records-internal has 4.3 on.)
 */
final class V4Records {
    static final int NO_PARTITION_LEADER_EPOCH = RecordBatch.NO_PARTITION_LEADER_EPOCH;

    private V4Records() {}

    /** One uncompressed magic-v2 batch, CreateTime = the batch's timestamp, values "v<n>". */
    static MemoryRecords build(PartitionLog.Batch batch, long baseOffset, int partitionLeaderEpoch) {
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

    static PartitionLog.CachedBatch cached(BatchMetadata b) {
        return new PartitionLog.CachedBatch(b.firstSeq(), b.lastSeq, b.firstOffset(), b.lastOffset);
    }
}
