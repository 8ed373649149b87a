package dev.prodsim.cluster;

import java.io.IOException;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One broker: its ports, its directory (DIR/broker-ID: server.properties,
 * data/, broker.log) and, while it runs, its JVM, a child of the supervisor
 * (dev.prodsim.cluster.BrokerMain, which is kafka.Kafka plus a watch on its
 * stdin: the pipe from this process, closed when the supervisor dies however
 * it dies).
 */
final class Broker {
  final int id;
  final int internalPort; // INTERNAL: replication, controller, the supervisor's AdminClient
  final int clientPort; // CLIENT: where the fault proxy forwards to
  final int controllerPort; // KRaft's CONTROLLER listener; -1 with ZooKeeper
  final int advertisedPort; // the fault proxy's port, advertised for CLIENT
  final Path dir;
  final Path properties;
  final Path log;

  private Process process;
  private OutputStream lifeline; // the broker's stdin; never written, closed by our death
  private boolean paused;

  Broker(int id, int internalPort, int clientPort, int controllerPort, int advertisedPort, Path clusterDir) {
    this("broker-" + id, id, internalPort, clientPort, controllerPort, advertisedPort, clusterDir);
  }

  /** Any Kafka node, e.g. KRaft's dedicated controller (DIR/NAME). */
  Broker(String name, int id, int internalPort, int clientPort, int controllerPort, int advertisedPort,
      Path clusterDir) {
    this.id = id;
    this.internalPort = internalPort;
    this.clientPort = clientPort;
    this.controllerPort = controllerPort;
    this.advertisedPort = advertisedPort;
    this.dir = clusterDir.resolve(name);
    this.properties = dir.resolve("server.properties");
    this.log = dir.resolve("broker.log");
  }

  Path dataDir() {
    return dir.resolve("data");
  }

  synchronized boolean running() {
    return process != null && process.isAlive();
  }

  synchronized boolean paused() {
    return running() && paused;
  }

  synchronized long pid() {
    return process == null ? -1 : process.pid();
  }

  synchronized void start(Cluster.Launcher launcher) throws IOException {
    if (running()) throw new IllegalStateException("broker " + id + " is running");
    List<String> cmd = new ArrayList<>(launcher.command(this));
    cmd.add(properties.toString());
    Files.writeString(log, "==== start " + String.join(" ", cmd) + "\n", StandardCharsets.UTF_8,
        java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
    ProcessBuilder pb = new ProcessBuilder(cmd)
        .directory(dir.toFile())
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    process = pb.start();
    lifeline = process.getOutputStream();
    paused = false;
  }

  /** kill -9; returns false if it was not running. */
  synchronized boolean kill() {
    if (!running()) return false;
    process.destroyForcibly();
    waitExit(10_000);
    paused = false;
    return true;
  }

  /**
   * SIGTERM (Kafka's own shutdown hook: a controlled shutdown) and wait up to
   * boundMs; then SIGKILL. Returns true if it stopped by itself.
   */
  synchronized boolean stop(long boundMs) {
    if (!running()) return true;
    if (paused) signal("CONT");
    paused = false;
    sigterm();
    if (waitExit(boundMs)) return true;
    process.destroyForcibly();
    waitExit(10_000);
    return false;
  }

  /** SIGTERM without waiting (the first half of a parallel stop). */
  synchronized void terminate() {
    if (!running()) return;
    if (paused) signal("CONT");
    paused = false;
    sigterm();
  }

  /**
   * SIGTERM through the ProcessHandle: Process.destroy() would also close
   * the broker's stdin, the pipe whose end halts it at once (BrokerMain).
   */
  private void sigterm() {
    process.toHandle().destroy();
  }

  synchronized boolean waitExit(long boundMs) {
    if (process == null) return true;
    try {
      return process.waitFor(boundMs, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return !process.isAlive();
    }
  }

  synchronized void pause() {
    if (!running()) throw new IllegalStateException("broker " + id + " is not running");
    signal("STOP");
    paused = true;
  }

  synchronized void resume() {
    if (!running()) throw new IllegalStateException("broker " + id + " is not running");
    signal("CONT");
    paused = false;
  }

  /** For the shutdown hook: no waiting on anything but the kill itself. */
  void destroyNow() {
    Process p;
    synchronized (this) {
      p = process;
    }
    if (p != null && p.isAlive()) p.destroyForcibly();
  }

  synchronized int exitCode() {
    return process == null || process.isAlive() ? Integer.MIN_VALUE : process.exitValue();
  }

  private void signal(String name) {
    try {
      Process k = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid()))
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD)
          .start();
      if (!k.waitFor(10, TimeUnit.SECONDS) || k.exitValue() != 0) {
        throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
      }
    } catch (IOException e) {
      throw new IllegalStateException("kill -" + name + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  /** The last `lines` lines of broker.log (for error reports on stderr). */
  String tail(int lines) {
    try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "r")) {
      long len = f.length();
      long from = Math.max(0, len - 64 * 1024);
      byte[] b = new byte[(int) (len - from)];
      f.seek(from);
      f.readFully(b);
      String[] all = new String(b, StandardCharsets.UTF_8).split("\n", -1);
      int start = Math.max(0, all.length - lines - 1);
      return String.join("\n", java.util.Arrays.copyOfRange(all, start, all.length));
    } catch (IOException e) {
      return "(no " + log + ": " + e.getMessage() + ")";
    }
  }
}
