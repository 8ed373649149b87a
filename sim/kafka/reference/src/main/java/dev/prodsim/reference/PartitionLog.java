package dev.prodsim.reference;

import java.io.File;
import java.util.List;

/**
 * What the protocol needs from one Kafka partition log. Each Kafka API
 * generation implements it in its own adapter, src/log-v2, -v3 or -v4
 * (class KafkaLogs), chosen by build.sh.
 */
interface PartitionLog {

    /** One batch to append: an idempotent batch, or a plain one with producerId -1. */
    record Batch(long producerId, short producerEpoch, int baseSequence, int count,
                 long timestampMs, long firstValue) {
        static final long NO_PRODUCER_ID = -1L;

        boolean hasProducerId() {
            return producerId != NO_PRODUCER_ID;
        }
    }

    /** LogAppendInfo's firstOffset and lastOffset. */
    record Offsets(long first, long last) {}

    /** One element of ProducerStateEntry.batchMetadata. */
    record CachedBatch(int firstSeq, int lastSeq, long firstOffset, long lastOffset) {}

    /** One entry of ProducerStateManager.activeProducers. */
    record Producer(long producerId, short producerEpoch, List<CachedBatch> batches) {}

    /** Opens Kafka logs; one per process. */
    interface Factory {
        /** AppInfoParser.getVersion(): the Kafka version on the classpath. */
        String kafkaVersion();

        /**
         * Opens (creating or recovering) the log in dir, as LogManager does at
         * startup: cleanShutdown says whether the last close was clean (Kafka then
         * skips segment recovery and trusts the producer snapshot at the log end).
         */
        PartitionLog open(File dir, long logStartOffset, long recoveryPoint, boolean cleanShutdown);
    }

    long logEndOffset();

    long logStartOffset();

    long recoveryPoint();

    /** appendAsLeader(records, leaderEpoch 0, origin Client): a produce request's append. */
    Offsets appendAsLeader(Batch batch);

    /** appendAsFollower of the batch placed at baseOffset (partition leader epoch 0). */
    Offsets appendAsFollower(Batch batch, long baseOffset);

    /** truncateTo(offset). */
    void truncateTo(long offset);

    /** What LogManager.shutdown does to each log: flush, then close (which writes a producer snapshot). */
    void shutdownCleanly();

    /** A process crash: file handles closed, nothing written (no producer snapshot, no clean-shutdown mark). */
    void abandon();

    /** ProducerStateManager.removeExpiredProducers(nowMs). */
    void removeExpiredProducers(long nowMs);

    /** ProducerStateManager.activeProducers, in increasing producer id order. */
    List<Producer> producers();
}
