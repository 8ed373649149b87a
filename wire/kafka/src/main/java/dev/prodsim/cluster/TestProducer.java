package dev.prodsim.cluster;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * For cluster_test.sh: sends records FIRST..LAST (by id) to TOPIC through
 * BOOTSTRAP, each with the header prodsim-id = its id in decimal ASCII as
 * prodsim's drivers write it, round robin over the partitions, with an
 * idempotent producer (acks=all), or a transactional one (one transaction,
 * committed) when TXN_ID is given; prints "sent ID TOPIC PARTITION OFFSET"
 * per record on stdout.
 *
 *   TestProducer BOOTSTRAP TOPIC PARTITIONS FIRST LAST [TXN_ID]
 */
public final class TestProducer {
  private TestProducer() {}

  public static void main(String[] a) throws Exception {
    if (a.length != 5 && a.length != 6) {
      System.err.println("usage: TestProducer BOOTSTRAP TOPIC PARTITIONS FIRST LAST [TXN_ID]");
      System.exit(2);
    }
    String topic = a[1];
    int partitions = Integer.parseInt(a[2]);
    long first = Long.parseLong(a[3]);
    long last = Long.parseLong(a[4]);
    Properties p = new Properties();
    p.setProperty("bootstrap.servers", a[0]);
    p.setProperty("acks", "all");
    p.setProperty("enable.idempotence", "true");
    p.setProperty("linger.ms", "5");
    p.setProperty("delivery.timeout.ms", "60000");
    p.setProperty("request.timeout.ms", "10000");
    p.setProperty("max.block.ms", "30000");
    if (a.length == 6) p.setProperty("transactional.id", a[5]);
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      if (a.length == 6) {
        producer.initTransactions();
        producer.beginTransaction();
      }
      List<Future<RecordMetadata>> sent = new ArrayList<>();
      for (long id = first; id <= last; id++) {
        ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, (int) (id % partitions),
            ("key-" + id).getBytes(StandardCharsets.US_ASCII), ("value-" + id).getBytes(StandardCharsets.US_ASCII));
        r.headers().add(new RecordHeader("prodsim-id", Long.toString(id).getBytes(StandardCharsets.US_ASCII)));
        sent.add(producer.send(r));
      }
      if (a.length == 6) producer.commitTransaction();
      producer.flush();
      long id = first;
      for (Future<RecordMetadata> f : sent) {
        RecordMetadata m = f.get(60, TimeUnit.SECONDS);
        System.out.println("sent " + id++ + " " + m.topic() + " " + m.partition() + " " + m.offset());
      }
    }
  }
}
