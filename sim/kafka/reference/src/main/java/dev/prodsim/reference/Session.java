package dev.prodsim.reference;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.StringJoiner;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.protocol.Errors;

/**
 * One partition log, t-0, in a temporary directory, and the clock it runs on;
 * each method is one protocol command and returns its one response line.
 */
final class Session {
    /** The directory name Kafka parses the topic-partition from. */
    private static final String PARTITION_DIR = "t-0";

    private final ManualTime time = new ManualTime();
    private final PendingTasks tasks = new PendingTasks();
    private final PartitionLog.Factory kafka = new KafkaLogs(time, tasks);
    private Path root;
    private PartitionLog log;
    private long nextValue;

    String version() {
        return "ok " + kafka.kafkaVersion();
    }

    /** A fresh directory, a new empty log, mock time 0. */
    String reset() {
        discard();
        time.reset();
        nextValue = 0;
        try {
            root = Files.createTempDirectory("kafka-reference-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        log = kafka.open(root.resolve(PARTITION_DIR).toFile(), 0L, 0L, false);
        return "ok";
    }

    /** A leader append of one batch from a client (producerId -1: a plain batch). */
    String append(long producerId, short epoch, int sequence, int count) {
        PartitionLog open = requireLog();
        PartitionLog.Batch batch = newBatch(producerId, epoch, sequence, count);
        long endBefore = open.logEndOffset();
        PartitionLog.Offsets offsets;
        try {
            offsets = open.appendAsLeader(batch);
        } catch (KafkaException e) {
            return errorLine(e);
        }
        // A duplicate is answered from ProducerStateEntry.findDuplicateBatch with the
        // cached batch's offsets and nothing written: the log end does not move.
        String kind = open.logEndOffset() == endBefore ? "duplicate" : "append";
        return kind + " " + offsets.first() + " " + offsets.last();
    }

    /** A follower append of one batch at the current log end. */
    String replicate(long producerId, short epoch, int sequence, int count) {
        PartitionLog open = requireLog();
        PartitionLog.Batch batch = producerId == PartitionLog.Batch.NO_PRODUCER_ID
            ? newBatch(producerId, (short) -1, -1, count)
            : newBatch(producerId, epoch, sequence, count);
        try {
            PartitionLog.Offsets offsets = open.appendAsFollower(batch, open.logEndOffset());
            return "ok " + offsets.first() + " " + offsets.last();
        } catch (KafkaException e) {
            return errorLine(e);
        }
    }

    String truncate(long offset) {
        PartitionLog open = requireLog();
        open.truncateTo(offset);
        return "ok " + open.logEndOffset();
    }

    /**
     * clean: LogManager's shutdown of the log, then its startup with the
     * clean-shutdown mark and the recovery point at the log end. crash: the log is
     * dropped with nothing written, then opened without the mark from its last
     * recovery point, so Kafka's recovery runs.
     */
    String restart(boolean clean) {
        PartitionLog open = requireLog();
        long logStart = open.logStartOffset();
        long recoveryPoint;
        if (clean) {
            open.shutdownCleanly();
            recoveryPoint = open.logEndOffset();
        } else {
            recoveryPoint = open.recoveryPoint();
            open.abandon();
        }
        log = null;
        log = kafka.open(root.resolve(PARTITION_DIR).toFile(), logStart, recoveryPoint, clean);
        return "ok " + log.logEndOffset();
    }

    String advance(long ms) {
        time.advance(ms);
        return "ok " + time.milliseconds();
    }

    String expire() {
        requireLog().removeExpiredProducers(time.milliseconds());
        return "ok";
    }

    /** "state" then " PID:EPOCH:" and the cached batches "FS-LS@FO-LO" joined by ",". */
    String state() {
        StringBuilder line = new StringBuilder("state");
        for (PartitionLog.Producer producer : requireLog().producers()) {
            StringJoiner batches = new StringJoiner(",");
            for (PartitionLog.CachedBatch b : producer.batches()) {
                batches.add(b.firstSeq() + "-" + b.lastSeq() + "@" + b.firstOffset() + "-" + b.lastOffset());
            }
            line.append(' ').append(producer.producerId()).append(':')
                .append(producer.producerEpoch()).append(':').append(batches);
        }
        return line.toString();
    }

    String end() {
        return "ok " + requireLog().logEndOffset();
    }

    boolean hasLog() {
        return log != null;
    }

    /** Runs the one-shot tasks Kafka scheduled during the last command. */
    void runPendingTasks() {
        tasks.runAll();
    }

    /** Closes the log's files (writing nothing) and deletes the directory. */
    void discard() {
        tasks.clear();
        PartitionLog open = log;
        log = null;
        try {
            if (open != null) {
                open.abandon();
            }
        } finally {
            if (root != null) {
                deleteTree(root);
                root = null;
            }
        }
    }

    private PartitionLog requireLog() {
        if (log == null) {
            throw new NoLogException();
        }
        return log;
    }

    private PartitionLog.Batch newBatch(long producerId, short epoch, int sequence, int count) {
        PartitionLog.Batch batch = new PartitionLog.Batch(producerId, epoch, sequence, count,
            time.milliseconds(), nextValue);
        nextValue += count;
        return batch;
    }

    /** The error a produce response would carry for e. */
    private static String errorLine(KafkaException e) {
        Errors error = Errors.forException(e);
        if (error == Errors.UNKNOWN_SERVER_ERROR) {
            System.err.println("kafka-reference: unmapped " + e);
        }
        return "error " + error.name();
    }

    static void deleteTree(Path top) {
        if (!Files.exists(top)) {
            return;
        }
        try {
            Files.walkFileTree(top, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                    Files.deleteIfExists(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            System.err.println("kafka-reference: cannot delete " + top + ": " + e);
        }
    }

    /** A log command before the first reset (or after a failed reopen). */
    static final class NoLogException extends RuntimeException {
        NoLogException() {
            super("no log: send reset first");
        }
    }
}
