package dev.prodsim.java;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.GatheringByteChannel;
import java.util.List;
import org.apache.kafka.common.network.Selectable;
import org.apache.kafka.common.network.Send;

/**
 * SimSelectorBase for kafka-clients before 2.8, where Selectable.send takes
 * a Send (with its destination) and Send.writeTo a GatheringByteChannel.
 */
class SimSelector extends SimSelectorBase<Send> implements Selectable {
  SimSelector(Lockstep ls) {
    super(ls);
  }

  @Override
  public void send(Send send) {
    Sink sink = new Sink();
    try {
      while (!send.completed()) send.writeTo(sink);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    writeOut(send.destination(), sink.bytes.toByteArray());
    written.add(send);
  }

  @Override
  public List<Send> completedSends() {
    return completed;
  }

  /** A channel that takes every byte at once. */
  static final class Sink implements GatheringByteChannel {
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

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
