package dev.prodsim.java;

import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * stdout: event lines and lockstep lines, each written whole with one write
 * and flushed. A write to a prodsim that has gone is ignored (it kills the
 * driver anyway). Nothing is printed after `closed` except lockstep lines.
 */
final class Out {
  private static final OutputStream out = new FileOutputStream(FileDescriptor.out);
  private static boolean closedPrinted;
  private static long lines; // every line printed: the run-ahead's "printed anything"

  private Out() {}

  static synchronized void line(String s) {
    lines++;
    try {
      out.write((s + "\n").getBytes(StandardCharsets.UTF_8));
      out.flush();
    } catch (IOException e) {
      // prodsim has gone
    }
  }

  /** How many lines the driver has printed so far. */
  static synchronized long count() {
    return lines;
  }

  /** An event line: `body` is the fields after "event" and before "t_us". */
  static synchronized void event(String event, String body, long tUs) {
    if (closedPrinted) return;
    StringBuilder b = new StringBuilder(64 + body.length());
    b.append("{\"event\":").append(Json.quote(event));
    if (!body.isEmpty()) b.append(',').append(body);
    b.append(",\"t_us\":").append(tUs).append('}');
    line(b.toString());
    if (event.equals("closed")) closedPrinted = true;
  }

  static void jobError(String text) {
    line("{\"event\":\"job_error\",\"text\":" + Json.quote(text) + "}");
  }
}
