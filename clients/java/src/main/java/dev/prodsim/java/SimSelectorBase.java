package dev.prodsim.java;

import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.network.ChannelState;
import org.apache.kafka.common.network.NetworkReceive;

/**
 * The lockstep protocol's connections as Kafka's Selectable (the parts that
 * do not depend on the Send API; SimSelector adds send and completedSends
 * for the kafka-clients version built against).
 *
 * <p>Kafka's own NetworkClient runs over it: connect prints a dial line,
 * send writes the Send's bytes (4-byte size and payload, as Kafka frames
 * them) as write lines at once, close prints close lines. Inputs from prodsim
 * (connected, data, closed) are queued by the coordinator between turns and
 * handed over by poll, which behaves as Kafka's Selector does: what happened
 * since the last poll, at most one completed receive per connection per poll
 * (the rest stays buffered and the next poll does not block), a remote close
 * reported once the frames before it were delivered. poll(timeout) with
 * nothing to hand over parks the I/O thread in the lockstep until input
 * arrives, wakeup() is called, or the simulated timeout passes.
 *
 * <p>Only participants and the coordinator call it, one at a time, so it
 * needs no lock of its own (the baton's monitors order the memory).
 */
abstract class SimSelectorBase<S> {
  static final int kChunkBytes = 262144;
  static final int kFrameBytesMax = 100 << 20;

  static final class Conn {
    final int c;
    final String id;
    boolean connected;
    boolean connectReported;
    boolean remoteClosed;
    String how;
    final ByteArrayOutputStream rx = new ByteArrayOutputStream();
    final ArrayDeque<byte[]> frames = new ArrayDeque<>();

    Conn(int c, String id) {
      this.c = c;
      this.id = id;
    }
  }

  protected final Lockstep ls;
  private final Map<String, Conn> byId = new LinkedHashMap<>();
  private final Map<Integer, Conn> byC = new HashMap<>();
  private int nextC = 1;
  private boolean wakeup;
  volatile Lockstep.Part sender;

  private final List<String> connected = new ArrayList<>();
  private final List<NetworkReceive> receives = new ArrayList<>();
  private final Map<String, ChannelState> disconnected = new LinkedHashMap<>();

  SimSelectorBase(Lockstep ls) {
    this.ls = ls;
  }

  private void enter() {
    Lockstep.Part p = ls.ensureRegistered();
    if (p != null && sender == null && "sender".equals(p.name)) sender = p;
  }

  // ---- Selectable, the common part

  public void connect(String id, InetSocketAddress address, int sendBufferSize, int receiveBufferSize) {
    enter();
    if (byId.containsKey(id)) throw new IllegalStateException("There is already a connection for id " + id);
    Conn k = new Conn(nextC++, id);
    byId.put(id, k);
    byC.put(k.c, k);
    Out.line("{\"dial\":" + k.c + ",\"host\":" + Json.quote(address.getHostString()) + ",\"port\":"
        + address.getPort() + "}");
  }

  public void wakeup() {
    Lockstep.Part p = ls.self();
    wakeup = true;
    if (p == null || p != sender) ls.wake(sender);
    onWakeupFrom(p);
  }

  /** Hook for the driver: a wakeup by the application thread (closing). */
  protected void onWakeupFrom(Lockstep.Part p) {}

  public void close() {
    enter();
    for (Conn k : new ArrayList<>(byId.values())) dropLocal(k);
    onClosed();
  }

  /** The I/O thread's last call into the driver (NetworkClient.close). */
  protected void onClosed() {}

  public void close(String id) {
    enter();
    Conn k = byId.get(id);
    if (k != null) dropLocal(k);
  }

  private void dropLocal(Conn k) {
    byId.remove(k.id);
    byC.remove(k.c);
    if (!k.remoteClosed) Out.line("{\"close\":" + k.c + "}");
  }

  // What one turn of a spinning I/O thread costs (poll): about a loop of
  // Sender.runOnce on this machine's JVM, rounded up.
  static final long kSpinCostNs = 100_000;
  private int emptySpins;

  public void poll(long timeoutMs) {
    enter();
    connected.clear();
    receives.clear();
    disconnected.clear();
    clearSends();
    if (hasNews()) {
      emptySpins = 0;
    } else if (timeoutMs > 0) {
      emptySpins = 0;
      ls.park(SimTime.satAdd(ls.nowNs(), timeoutMs), null, null);
    } else if (++emptySpins > 1) {
      // The I/O thread polls without waiting again and nothing happened
      // since: it is spinning (Sender.runOnce computed a poll timeout of 0
      // while nothing can be sent). On the wall clock each turn of that loop
      // costs time, so its deadlines come; in lockstep no time would pass
      // and the step would never end. Each spin after the first costs
      // kSpinCostNs of simulated time.
      ls.park(SimTime.satAdd(ls.nowNs(), kSpinCostNs), null, null);
    }
    wakeup = false;
    moveSends();
    for (Conn k : new ArrayList<>(byId.values())) {
      if (k.connected && !k.connectReported) {
        k.connectReported = true;
        connected.add(k.id);
      }
      byte[] f = k.frames.poll();
      if (f != null) {
        receives.add(new NetworkReceive(k.id, ByteBuffer.wrap(f)));
      } else if (k.remoteClosed) {
        byId.remove(k.id);
        byC.remove(k.c);
        disconnected.put(k.id, k.connected ? ChannelState.READY : ChannelState.NOT_CONNECTED);
      }
    }
  }

  private boolean hasNews() {
    if (wakeup || hasSends()) return true;
    for (Conn k : byId.values()) {
      if ((k.connected && !k.connectReported) || !k.frames.isEmpty() || k.remoteClosed) return true;
    }
    return false;
  }

  // A List: Selectable's return type is List before 2.5, Collection after.
  public List<NetworkReceive> completedReceives() {
    return receives;
  }

  public Map<String, ChannelState> disconnected() {
    return disconnected;
  }

  public List<String> connected() {
    return connected;
  }

  public void mute(String id) {}

  public void unmute(String id) {}

  public void muteAll() {}

  public void unmuteAll() {}

  public boolean isChannelReady(String id) {
    Conn k = byId.get(id);
    return k != null && k.connected && !k.remoteClosed;
  }

  // ---- sends, of the version's Send type S (Send before 2.8, NetworkSend
  // from 2.8): written in this poll's step, then completed at the next poll.

  protected final List<S> written = new ArrayList<>();
  protected final List<S> completed = new ArrayList<>();

  private void clearSends() {
    completed.clear();
  }

  private void moveSends() {
    completed.addAll(written);
    written.clear();
  }

  private boolean hasSends() {
    return !written.isEmpty();
  }

  /** Writes `bytes` out on the connection of node `id` as write lines. */
  protected void writeOut(String id, byte[] bytes) {
    Conn k = byId.get(id);
    if (k == null) throw new IllegalStateException("Attempt to send to a connection that is not open: " + id);
    Base64.Encoder enc = Base64.getEncoder();
    for (int off = 0; off < bytes.length; off += kChunkBytes) {
      int n = Math.min(kChunkBytes, bytes.length - off);
      ByteBuffer chunk = ByteBuffer.wrap(bytes, off, n);
      Out.line("{\"write\":" + k.c + ",\"bytes\":\"" + new String(enc.encode(chunk).array(),
          java.nio.charset.StandardCharsets.US_ASCII) + "\"}");
    }
  }

  // ---- inputs, from the coordinator between turns

  /** Returns false for an unknown connection (one the client closed: ignored). */
  boolean inputConnected(int c) {
    Conn k = byC.get(c);
    if (k == null) return false;
    k.connected = true;
    ls.wake(sender);
    return true;
  }

  boolean inputData(int c, byte[] data) {
    Conn k = byC.get(c);
    if (k == null || k.remoteClosed) return false;
    k.rx.write(data, 0, data.length);
    byte[] all = k.rx.toByteArray();
    int off = 0;
    while (all.length - off >= 4) {
      int size = ByteBuffer.wrap(all, off, 4).getInt();
      if (size < 0 || size > kFrameBytesMax) throw new IllegalStateException("bad frame size " + size);
      if (all.length - off - 4 < size) break;
      byte[] f = new byte[size];
      System.arraycopy(all, off + 4, f, 0, size);
      k.frames.add(f);
      off += 4 + size;
    }
    k.rx.reset();
    k.rx.write(all, off, all.length - off);
    ls.wake(sender);
    return true;
  }

  boolean inputClosed(int c, String how) {
    Conn k = byC.get(c);
    if (k == null) return false;
    k.remoteClosed = true;
    k.how = how;
    ls.wake(sender);
    return true;
  }
}
