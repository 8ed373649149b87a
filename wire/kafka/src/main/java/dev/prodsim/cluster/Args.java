package dev.prodsim.cluster;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The command line (README.md, "Start"). */
final class Args {
  /** One --topic entry. */
  record Topic(String name, int partitions, int replicationFactor) {}

  static final String USAGE =
      "usage: kafka-cluster --dir DIR --brokers N --advertise PORT1,...,PORTN"
          + " --topic NAME:PARTITIONS:RF[,...] --min-insync N [--replica-lag-ms MS]"
          + " [--zk-session-ms MS] [--controllers separate|combined] [--start-timeout-ms MS] [--keep-dir]";

  Path dir;
  int brokers = -1;
  int[] advertise;
  final List<Topic> topics = new ArrayList<>();
  int minInsync = -1;
  int replicaLagMs = -1; // -1: the broker's default
  int zkSessionMs = -1; // -1: the broker's default
  int startTimeoutMs = 90_000;
  /** KRaft: one dedicated controller process (separate), or every broker a controller too (combined). */
  boolean combinedControllers;
  boolean keepDir;

  static final class UsageException extends Exception {
    UsageException(String message) {
      super(message);
    }
  }

  static Args parse(String[] argv) throws UsageException {
    Args a = new Args();
    for (int i = 0; i < argv.length; i++) {
      String flag = argv[i];
      if (flag.equals("--keep-dir")) {
        a.keepDir = true;
        continue;
      }
      if (i + 1 >= argv.length) throw new UsageException(flag + " needs a value");
      String v = argv[++i];
      switch (flag) {
        case "--dir" -> a.dir = Path.of(v).toAbsolutePath().normalize();
        case "--brokers" -> a.brokers = number(flag, v, 1, 64);
        case "--advertise" -> {
          String[] parts = v.split(",", -1);
          a.advertise = new int[parts.length];
          for (int k = 0; k < parts.length; k++) a.advertise[k] = number(flag, parts[k], 1, 65535);
        }
        case "--topic" -> {
          for (String t : v.split(",", -1)) {
            String[] f = t.split(":", -1);
            if (f.length != 3 || f[0].isEmpty() || !f[0].matches("[A-Za-z0-9._-]{1,249}")) {
              throw new UsageException("--topic wants NAME:PARTITIONS:RF, got " + t);
            }
            a.topics.add(new Topic(f[0], number(flag, f[1], 1, 10_000), number(flag, f[2], 1, 64)));
          }
        }
        case "--min-insync" -> a.minInsync = number(flag, v, 1, 64);
        case "--replica-lag-ms" -> a.replicaLagMs = number(flag, v, 1, 3_600_000);
        case "--zk-session-ms" -> a.zkSessionMs = number(flag, v, 1, 3_600_000);
        case "--controllers" -> {
          if (!v.equals("separate") && !v.equals("combined")) {
            throw new UsageException("--controllers is separate or combined, got " + v);
          }
          a.combinedControllers = v.equals("combined");
        }
        case "--start-timeout-ms" -> a.startTimeoutMs = number(flag, v, 1, 3_600_000);
        default -> throw new UsageException("unknown option " + flag);
      }
    }
    if (a.dir == null) throw new UsageException("--dir is required");
    if (a.brokers < 0) throw new UsageException("--brokers is required");
    if (a.advertise == null) throw new UsageException("--advertise is required");
    if (a.advertise.length != a.brokers) {
      throw new UsageException("--advertise names " + a.advertise.length + " ports for " + a.brokers + " brokers");
    }
    if (a.topics.isEmpty()) throw new UsageException("--topic is required");
    if (a.minInsync < 0) throw new UsageException("--min-insync is required");
    Map<String, Topic> seen = new LinkedHashMap<>();
    for (Topic t : a.topics) {
      if (seen.put(t.name(), t) != null) throw new UsageException("topic " + t.name() + " given twice");
      if (t.replicationFactor() > a.brokers) {
        throw new UsageException("topic " + t.name() + ": replication factor " + t.replicationFactor()
            + " > " + a.brokers + " brokers");
      }
    }
    return a;
  }

  private static int number(String flag, String v, int min, int max) throws UsageException {
    if (!v.matches("[0-9]{1,10}")) throw new UsageException(flag + ": not a number: " + v);
    long n = Long.parseLong(v);
    if (n < min || n > max) throw new UsageException(flag + ": " + v + " is not in " + min + ".." + max);
    return (int) n;
  }
}
