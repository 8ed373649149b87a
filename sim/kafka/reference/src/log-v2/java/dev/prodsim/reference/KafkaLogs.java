package dev.prodsim.reference;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Properties;
import kafka.log.Log;
import kafka.log.LogConfig;
import kafka.server.BrokerTopicStats;
import kafka.server.LogDirFailureChannel;
import org.apache.kafka.common.utils.AppInfoParser;

/**
 * Kafka 2.4 to 2.8: the partition log is kafka.log.Log (Scala), opened with
 * Log.apply as LogManager.loadLog does. Two things moved inside the line and
 * are reached by reflection: Log.apply gained lastShutdownClean and
 * keepPartitionMetadataFile in 2.8 (before, Log itself looks for LogManager's
 * clean-shutdown mark, ".kafka_cleanshutdown" in the parent directory, which
 * is written here in either case), and LogAppendInfo.firstOffset became an
 * Option of LogOffsetMetadata (V2Log.offset).
 */
final class KafkaLogs implements PartitionLog.Factory {
    /** Log.apply's maxProducerIdExpirationMs (LogManager passes transactional.id.expiration.ms in 2.x). */
    static final int PRODUCER_ID_EXPIRATION_MS = 1000;
    /** The periodic expiry check's interval; the manual scheduler never runs it anyway. */
    private static final int EXPIRATION_CHECK_INTERVAL_MS = Integer.MAX_VALUE;

    private final ManualTime time;
    private final V2Scheduler scheduler;
    private final BrokerTopicStats brokerTopicStats = new BrokerTopicStats();
    private final LogDirFailureChannel logDirFailureChannel = new LogDirFailureChannel(1);
    private final LogConfig config = LogConfig.apply(new Properties(), LogConfig.apply$default$2());

    KafkaLogs(ManualTime time, PendingTasks tasks) {
        this.time = time;
        this.scheduler = new V2Scheduler(tasks);
    }

    @Override
    public String kafkaVersion() {
        return AppInfoParser.getVersion();
    }

    @Override
    public PartitionLog open(File dir, long logStartOffset, long recoveryPoint, boolean cleanShutdown) {
        Path mark = dir.toPath().resolveSibling(Log.CleanShutdownFile());
        try {
            if (cleanShutdown) {
                Files.createFile(mark);
            }
            try {
                return new V2Log(apply(dir, logStartOffset, recoveryPoint, cleanShutdown));
            } finally {
                // LogManager deletes the mark once its logs are loaded.
                Files.deleteIfExists(mark);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Log.apply(dir, config, logStartOffset, recoveryPoint, scheduler, stats, time, ...). */
    private Log apply(File dir, long logStartOffset, long recoveryPoint, boolean cleanShutdown) {
        Object[] common = {dir, config, logStartOffset, recoveryPoint, scheduler, brokerTopicStats, time,
            PRODUCER_ID_EXPIRATION_MS, EXPIRATION_CHECK_INTERVAL_MS, logDirFailureChannel};
        Method apply = Reflect.method(Log.class, "apply", common.length);             // 2.4 - 2.7
        if (apply != null) {
            return (Log) Reflect.invoke(apply, null, common);
        }
        apply = Reflect.method(Log.class, "apply", common.length + 2);                // 2.8
        if (apply == null) {
            throw new IllegalStateException("no Log.apply of a known shape in this Kafka");
        }
        Object[] args = Arrays.copyOf(common, common.length + 2);
        args[common.length] = cleanShutdown;      // lastShutdownClean
        args[common.length + 1] = true;           // keepPartitionMetadataFile
        return (Log) Reflect.invoke(apply, null, args);
    }
}
