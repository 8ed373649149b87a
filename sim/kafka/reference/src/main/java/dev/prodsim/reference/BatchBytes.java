package dev.prodsim.reference;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * Byte-level edits of one magic-v2 record batch. Kafka's MemoryRecordsBuilder
 * refuses a negative producer epoch or base sequence for a batch with a
 * producer id, but a client can send one; the adapters build the batch with 0
 * there and write the real values here (field offsets from the v2 batch
 * format in Kafka's protocol documentation), then recompute the CRC-32C,
 * which covers everything from the attributes field to the end.
 */
final class BatchBytes {
    private static final int PRODUCER_ID = 43;
    private static final int PRODUCER_EPOCH = 51;
    private static final int BASE_SEQUENCE = 53;
    private static final int CRC = 17;
    private static final int ATTRIBUTES = 21;

    private BatchBytes() {}

    /** Does the builder refuse these producer fields? */
    static boolean needsPatch(PartitionLog.Batch batch) {
        return batch.hasProducerId() && (batch.producerEpoch() < 0 || batch.baseSequence() < 0);
    }

    static short buildableEpoch(PartitionLog.Batch batch) {
        return needsPatch(batch) ? 0 : batch.producerEpoch();
    }

    static int buildableSequence(PartitionLog.Batch batch) {
        return needsPatch(batch) ? 0 : batch.baseSequence();
    }

    /** Writes the batch's real producer fields into the single batch in buffer (position 0). */
    static void patch(ByteBuffer buffer, PartitionLog.Batch batch) {
        buffer.putLong(PRODUCER_ID, batch.producerId());
        buffer.putShort(PRODUCER_EPOCH, batch.producerEpoch());
        buffer.putInt(BASE_SEQUENCE, batch.baseSequence());
        ByteBuffer covered = buffer.duplicate();
        covered.position(ATTRIBUTES).limit(buffer.limit());
        CRC32C crc = new CRC32C();
        crc.update(covered);
        buffer.putInt(CRC, (int) crc.getValue());
    }
}
