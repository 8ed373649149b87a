package dev.prodsim.reference;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Optional;
import java.util.Properties;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * Kafka 4.1 on: the partition log is org.apache.kafka.storage.internals.log.UnifiedLog
 * (Java), opened with UnifiedLog.create as LogManager.loadLog does; LogManager's
 * clean-shutdown mark reaches it as lastShutdownClean. AppInfoParser moved to
 * org.apache.kafka.common.utils.internals in 4.4 and is looked up by name.
 */
final class KafkaLogs implements PartitionLog.Factory {
    /** producer.id.expiration.ms, through ProducerStateManagerConfig. */
    static final int PRODUCER_ID_EXPIRATION_MS = 1000;
    /** producer.id.expiration.check.interval.ms; the manual scheduler never runs it anyway. */
    private static final int EXPIRATION_CHECK_INTERVAL_MS = Integer.MAX_VALUE;
    /** transaction.max.timeout.ms's default, which LogManager passes as maxTransactionTimeoutMs. */
    private static final int MAX_TRANSACTION_TIMEOUT_MS = 900_000;

    private final ManualTime time;
    private final V4Scheduler scheduler;
    private final BrokerTopicStats brokerTopicStats = new BrokerTopicStats(false);
    private final LogDirFailureChannel logDirFailureChannel = new LogDirFailureChannel(1);
    private final LogConfig config = new LogConfig(new Properties());
    /** producer.id.expiration.ms and no transaction verification. */
    private final ProducerStateManagerConfig producerStateConfig =
        new ProducerStateManagerConfig(PRODUCER_ID_EXPIRATION_MS, false);

    KafkaLogs(ManualTime time, PendingTasks tasks) {
        this.time = time;
        this.scheduler = new V4Scheduler(tasks);
    }

    /** AppInfoParser.getVersion(), wherever this Kafka keeps AppInfoParser. */
    @Override
    public String kafkaVersion() {
        Class<?> parser = Reflect.firstClass("org.apache.kafka.common.utils.internals.AppInfoParser",
            "org.apache.kafka.common.utils.AppInfoParser");
        return (String) Reflect.invoke(Reflect.method(parser, "getVersion", 0), null);
    }

    /** UnifiedLog.create: LogLoader.load (segment recovery unless clean), then producer state. */
    @Override
    public PartitionLog open(File dir, long logStartOffset, long recoveryPoint, boolean cleanShutdown) {
        try {
            UnifiedLog log = UnifiedLog.create(dir, config, logStartOffset, recoveryPoint, scheduler,
                brokerTopicStats, time, MAX_TRANSACTION_TIMEOUT_MS, producerStateConfig,
                EXPIRATION_CHECK_INTERVAL_MS, logDirFailureChannel,
                cleanShutdown,        // lastShutdownClean
                Optional.empty());    // topicId
            return new V4Log(log);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
