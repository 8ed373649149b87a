package dev.prodsim.cluster;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The `dump` answer: every replica's log of every partition of the topics,
 * read from its segment files (Segments, Kafka's FileRecords), and every
 * replica's high watermark (its replication-offset-checkpoint).
 */
final class Dump {
  static final String ID_HEADER = "prodsim-id";
  /** A record without the prodsim-id header. */
  static final String NO_HEADER = "-";

  record Batch(long baseOffset, long lastOffset, long producerId, short producerEpoch, int baseSequence,
      int lastSequence, boolean transactional, boolean control, List<String> ids) {}

  private Dump() {}

  /** Appends the `batch` and `hw` lines (not `ok`, not `end`). */
  static void write(StringBuilder out, List<Broker> brokers, List<Args.Topic> topics) throws IOException {
    for (Args.Topic t : topics) {
      for (int p = 0; p < t.partitions(); p++) {
        for (Broker b : brokers) {
          File dir = b.dataDir().resolve(t.name() + "-" + p).toFile();
          File[] segments = dir.listFiles((d, name) -> name.endsWith(".log"));
          if (segments == null) continue;
          // NNNNNNNNNNNNNNNNNNNN.log: the base offset, zero-padded to 20 digits.
          Arrays.sort(segments, (x, y) -> x.getName().compareTo(y.getName()));
          for (File segment : segments) {
            for (Batch batch : Segments.read(segment, ID_HEADER)) {
              out.append("batch ").append(b.id).append(' ').append(t.name()).append(' ').append(p)
                  .append(' ').append(batch.baseOffset()).append(' ').append(batch.lastOffset())
                  .append(' ').append(batch.producerId()).append(' ').append(batch.producerEpoch())
                  .append(' ').append(batch.baseSequence()).append(' ').append(batch.lastSequence())
                  .append(' ').append(batch.transactional() ? 1 : 0).append(' ').append(batch.control() ? 1 : 0)
                  .append(' ');
              appendIds(out, batch.ids());
              out.append('\n');
            }
          }
        }
      }
    }
    for (Args.Topic t : topics) {
      for (int p = 0; p < t.partitions(); p++) {
        for (Broker b : brokers) {
          if (!Files.isDirectory(b.dataDir().resolve(t.name() + "-" + p))) continue;
          Long hw = checkpoint(b.dataDir().resolve("replication-offset-checkpoint")).get(t.name() + " " + p);
          out.append("hw ").append(b.id).append(' ').append(t.name()).append(' ').append(p).append(' ')
              .append(hw == null ? -1 : hw).append('\n');
        }
      }
    }
  }

  /** The ids, comma-separated ("-" for a batch without records, which Kafka does not write). */
  static void appendIds(StringBuilder out, List<String> ids) {
    out.append(ids.isEmpty() ? "-" : String.join(",", ids));
  }

  /**
   * A prodsim-id header's value: as written when it is ASCII digits, else x
   * and its bytes in hex ("x" alone for an empty or null value).
   */
  static String idToken(byte[] v) {
    if (v != null && digits(v)) return new String(v, StandardCharsets.US_ASCII);
    StringBuilder out = new StringBuilder("x");
    if (v != null) {
      for (byte c : v) out.append(Character.forDigit((c >> 4) & 0xf, 16)).append(Character.forDigit(c & 0xf, 16));
    }
    return out.toString();
  }

  private static boolean digits(byte[] v) {
    if (v.length == 0) return false;
    for (byte c : v) {
      if (c < '0' || c > '9') return false;
    }
    return true;
  }

  /** replication-offset-checkpoint: "0", a count, then "TOPIC PARTITION OFFSET" lines. Missing: empty. */
  static Map<String, Long> checkpoint(Path file) throws IOException {
    Map<String, Long> out = new HashMap<>();
    if (!Files.exists(file)) return out;
    List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    for (int i = 2; i < lines.size(); i++) {
      String[] f = lines.get(i).trim().split("\\s+");
      if (f.length == 3) out.put(f[0] + " " + f[1], Long.parseLong(f[2]));
    }
    return out;
  }
}
