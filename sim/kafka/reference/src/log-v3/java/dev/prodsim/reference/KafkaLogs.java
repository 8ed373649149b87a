package dev.prodsim.reference;

import java.io.File;
import java.lang.reflect.Method;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import kafka.log.UnifiedLog;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogOffsetsListener;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import scala.Option;

/**
 * Kafka 3.9 and 4.0: the partition log is kafka.log.UnifiedLog (Scala) over
 * the storage module's Java classes (LogConfig, ProducerStateManager, ...),
 * opened with UnifiedLog.apply as LogManager.loadLog does; LogManager's
 * clean-shutdown mark reaches it as lastShutdownClean. BrokerTopicStats moved
 * from kafka.server (3.9) to org.apache.kafka.storage.log.metrics (4.0), so
 * it and UnifiedLog.apply are reached by reflection.
 */
final class KafkaLogs implements PartitionLog.Factory {
    /** producer.id.expiration.ms, through ProducerStateManagerConfig. */
    static final int PRODUCER_ID_EXPIRATION_MS = 1000;
    /** producer.id.expiration.check.interval.ms; the manual scheduler never runs it anyway. */
    private static final int EXPIRATION_CHECK_INTERVAL_MS = Integer.MAX_VALUE;
    /** transaction.max.timeout.ms's default, which LogManager passes as maxTransactionTimeoutMs. */
    private static final int MAX_TRANSACTION_TIMEOUT_MS = 900_000;

    private final ManualTime time;
    private final V3Scheduler scheduler;
    private final Object brokerTopicStats = newBrokerTopicStats();
    private final LogDirFailureChannel logDirFailureChannel = new LogDirFailureChannel(1);
    private final LogConfig config = new LogConfig(new Properties());
    /** producer.id.expiration.ms and no transaction verification. */
    private final ProducerStateManagerConfig producerStateConfig =
        new ProducerStateManagerConfig(PRODUCER_ID_EXPIRATION_MS, false);

    KafkaLogs(ManualTime time, PendingTasks tasks) {
        this.time = time;
        this.scheduler = new V3Scheduler(tasks);
    }

    @Override
    public String kafkaVersion() {
        return AppInfoParser.getVersion();
    }

    /** UnifiedLog.apply: LogLoader.load (segment recovery unless clean), then producer state. */
    @Override
    public PartitionLog open(File dir, long logStartOffset, long recoveryPoint, boolean cleanShutdown) {
        Object[] args = {dir, config, logStartOffset, recoveryPoint, scheduler, brokerTopicStats,
            time, MAX_TRANSACTION_TIMEOUT_MS, producerStateConfig, EXPIRATION_CHECK_INTERVAL_MS,
            logDirFailureChannel,
            cleanShutdown,                          // lastShutdownClean
            Option.empty(),                         // topicId
            true,                                   // keepPartitionMetadataFile
            new ConcurrentHashMap<String, Integer>(),  // numRemainingSegments (a metric)
            false,                                  // remoteStorageSystemEnable
            LogOffsetsListener.NO_OP_OFFSETS_LISTENER};
        Method apply = Reflect.method(UnifiedLog.class, "apply", args.length);
        if (apply == null) {
            throw new IllegalStateException("no UnifiedLog.apply of a known shape in this Kafka");
        }
        return new V3Log((UnifiedLog) Reflect.invoke(apply, null, args));
    }

    /** new BrokerTopicStats(remoteStorageEnabled = false), wherever this Kafka keeps it. */
    private static Object newBrokerTopicStats() {
        Class<?> type = Reflect.firstClass("org.apache.kafka.storage.log.metrics.BrokerTopicStats",
            "kafka.server.BrokerTopicStats");
        try {
            return type.getConstructor(boolean.class).newInstance(false);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }
}
