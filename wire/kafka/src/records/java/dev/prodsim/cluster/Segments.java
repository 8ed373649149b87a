package dev.prodsim.cluster;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;

/**
 * Reads one segment file (NNN.log) with Kafka's own classes: FileRecords,
 * batch by batch, record by record (org.apache.kafka.common.record).
 */
final class Segments {
  private Segments() {}

  static List<Dump.Batch> read(File segment, String idHeader) throws IOException {
    List<Dump.Batch> out = new ArrayList<>();
    try (FileRecords records = FileRecords.open(segment, false)) {
      for (RecordBatch b : records.batches()) {
        List<String> ids = new ArrayList<>();
        for (Record r : b) {
          if (b.isControlBatch()) {
            // A transaction marker: commit or abort (its key's type).
            ids.add(r.hasKey() ? ControlRecordType.parse(r.key()).name().toLowerCase(Locale.ROOT) : "unknown");
            continue;
          }
          String id = Dump.NO_HEADER;
          for (Header h : r.headers()) {
            if (h.key().equals(idHeader)) {
              id = Dump.idToken(h.value());
              break;
            }
          }
          ids.add(id);
        }
        out.add(new Dump.Batch(b.baseOffset(), b.lastOffset(), b.producerId(), b.producerEpoch(),
            b.baseSequence(), b.lastSequence(), b.isTransactional(), b.isControlBatch(), ids));
      }
    }
    return out;
  }
}
