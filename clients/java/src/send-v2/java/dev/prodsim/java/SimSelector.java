package dev.prodsim.java;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.List;
import org.apache.kafka.common.network.NetworkSend;
import org.apache.kafka.common.network.Selectable;
import org.apache.kafka.common.network.TransferableChannel;

/**
 * SimSelectorBase for kafka-clients 2.8 and later, where Selectable.send
 * takes a NetworkSend and Send.writeTo a TransferableChannel.
 */
class SimSelector extends SimSelectorBase<NetworkSend> implements Selectable {
  SimSelector(Lockstep ls) {
    super(ls);
  }

  @Override
  public void send(NetworkSend send) {
    Sink sink = new Sink();
    try {
      while (!send.completed()) send.writeTo(sink);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    writeOut(send.destinationId(), sink.bytes.toByteArray());
    written.add(send);
  }

  @Override
  public List<NetworkSend> completedSends() {
    return completed;
  }

  /** A channel that takes every byte at once. */
  static final class Sink implements TransferableChannel {
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

    @Override
    public boolean hasPendingWrites() {
      return false;
    }

    @Override
    public long transferFrom(FileChannel fileChannel, long position, long count) throws IOException {
      ByteBuffer b = ByteBuffer.allocate((int) count);
      int n = fileChannel.read(b, position);
      bytes.write(b.array(), 0, Math.max(n, 0));
      return Math.max(n, 0);
    }

    @Override
    public int write(ByteBuffer src) {
      int n = src.remaining();
      byte[] a = new byte[n];
      src.get(a);
      bytes.write(a, 0, n);
      return n;
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) {
      long n = 0;
      for (int k = offset; k < offset + length; k++) n += write(srcs[k]);
      return n;
    }

    @Override
    public long write(ByteBuffer[] srcs) {
      return write(srcs, 0, srcs.length);
    }

    @Override
    public boolean isOpen() {
      return true;
    }

    @Override
    public void close() {}
  }
}
