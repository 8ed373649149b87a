package dev.prodsim.cluster;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * What one given broker answers to a Metadata request: the view its clients
 * get. The AdminClient sends each request to a broker of its own choosing,
 * and brokers learn leader and ISR changes at slightly different moments;
 * this asks each broker in turn, so that `ready` and `move-leader` hold on
 * every broker. Metadata v4 (every broker from 1.0 to 4.x serves it), over a
 * plain socket on the INTERNAL listener.
 */
final class MetadataProbe {
  /** One partition as the broker sees it. */
  record Partition(int error, int leader, List<Integer> replicas, List<Integer> isr) {}

  /** The broker's answer: the brokers it lists, and "TOPIC PARTITION" to partition (topic errors as error). */
  record View(Set<Integer> brokers, Map<String, Partition> partitions, Map<String, Integer> topicErrors) {}

  private static final short METADATA = 3;
  private static final short VERSION = 4;

  private MetadataProbe() {}

  static View ask(int port, List<String> topics, int timeoutMs) throws IOException {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(body);
    // Request header v1.
    out.writeShort(METADATA);
    out.writeShort(VERSION);
    out.writeInt(1); // correlation id
    writeString(out, "prodsim-cluster-probe");
    // MetadataRequest v4: topics, allow_auto_topic_creation.
    out.writeInt(topics.size());
    for (String t : topics) writeString(out, t);
    out.writeByte(0);
    out.flush();
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), timeoutMs);
      s.setSoTimeout(timeoutMs);
      s.setTcpNoDelay(true);
      DataOutputStream w = new DataOutputStream(s.getOutputStream());
      w.writeInt(body.size());
      body.writeTo(w);
      w.flush();
      DataInputStream in = new DataInputStream(s.getInputStream());
      int size = in.readInt();
      if (size < 4 || size > 64 << 20) throw new IOException("a Metadata response of " + size + " bytes");
      byte[] frame = new byte[size];
      in.readFully(frame);
      return parse(new DataInputStream(new java.io.ByteArrayInputStream(frame)));
    }
  }

  private static View parse(DataInputStream in) throws IOException {
    if (in.readInt() != 1) throw new IOException("a Metadata response with another correlation id");
    in.readInt(); // throttle_time_ms
    Set<Integer> brokers = new TreeSet<>();
    int nb = in.readInt();
    for (int i = 0; i < nb; i++) {
      brokers.add(in.readInt());
      readString(in); // host
      in.readInt(); // port
      readString(in); // rack
    }
    readString(in); // cluster_id
    in.readInt(); // controller_id
    Map<String, Partition> partitions = new HashMap<>();
    Map<String, Integer> topicErrors = new HashMap<>();
    int nt = in.readInt();
    for (int i = 0; i < nt; i++) {
      int topicError = in.readShort();
      String name = readString(in);
      in.readByte(); // is_internal
      topicErrors.put(name, topicError);
      int np = in.readInt();
      for (int k = 0; k < np; k++) {
        int error = in.readShort();
        int index = in.readInt();
        int leader = in.readInt();
        List<Integer> replicas = readInts(in);
        List<Integer> isr = readInts(in);
        partitions.put(name + " " + index, new Partition(error, leader, replicas, isr));
      }
    }
    return new View(brokers, partitions, topicErrors);
  }

  private static void writeString(DataOutputStream out, String s) throws IOException {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    out.writeShort(b.length);
    out.write(b);
  }

  private static String readString(DataInputStream in) throws IOException {
    int n = in.readShort();
    if (n < 0) return null;
    byte[] b = new byte[n];
    in.readFully(b);
    return new String(b, StandardCharsets.UTF_8);
  }

  private static List<Integer> readInts(DataInputStream in) throws IOException {
    int n = in.readInt();
    List<Integer> out = new ArrayList<>(Math.max(0, n));
    for (int i = 0; i < n; i++) out.add(in.readInt());
    return out;
  }
}
