// The real-time world: a scenario's cluster, network and faults (the same
// sim/kafka, sim/net and fault_models as the simulated world) with the clock
// following the wall clock, served on 127.0.0.1 (wire/bridge.h), and a real
// client run against it as a child process (wire/child.h, a driver of
// wire/drivers.h). One thread: the scheduler runs the simulated tasks and,
// whenever none is runnable (and every kOutsidePollSteps steps), waits on
// the epoll loop for sockets, the child's pipes and the next timer.
//
// Why epoll and not libuv or Asio: the loop needs four kinds of fd and one
// timer, and must hand control back to the simulation's scheduler between
// events; a direct epoll + timerfd loop is ~120 lines with nothing hidden,
// where a library's own run loop would have to be turned inside out.
//
// A trial is not reproducible (the kernel, the client's threads and the
// wall clock decide its interleaving): RunReal's verdict is one sample;
// `prodsim real --trials=N` prints the distribution.
//
// Bounds: a trial ends when the client has exited and its output is read,
// or at the scenario's time limit (limits.time, or the last heal plus
// limits.liveness_grace, whichever is sooner), capped by RealOptions::bound
// (serve: limits.time only);
// a client still running then is killed (client-hung). Nothing outlives a
// trial: the child's process group is killed and reaped, every socket
// closed.
#ifndef PRODSIM_WIRE_REAL_WORLD_H_
#define PRODSIM_WIRE_REAL_WORLD_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "scenarios/runner.h"
#include "scenarios/scenario.h"
#include "sim/core/time.h"

namespace wire {

// kWall: the client on the wall clock over real loopback sockets (a trial is
// a sample). kSimulated: the client in lockstep with the simulated
// cluster's scheduler (clients/README.md, "Simulated time"): its bytes go
// through the bridge's virtual connections, time is the scheduler's, and
// the run is as deterministic as the driver makes its client.
enum class Clock { kWall, kSimulated };

struct RealOptions {
  std::string client = "librdkafka";  // a driver name, or a command
  Clock clock = Clock::kWall;
  // The trial's bound: on the wall clock (kWall) or the simulated one.
  sim::Duration bound = sim::Duration::Seconds(120);
  // Simulated time: the wall time a driver may take to answer one step
  // before it is killed as hung (a JVM's first step loads and compiles the
  // client; a loaded machine slows every step).
  sim::Duration step_bound = sim::Duration::Seconds(60);
  bool record_trace = false;
};

struct RealOutput {
  scenarios::RunOutput run;                   // verdict, checks, record (record.client set)
  std::string client;                         // the driver's name and version
  std::vector<std::string> ignored_settings;  // scenario settings with no client equivalent
  sim::Duration wall;                         // how long the trial took
  uint64_t connections = 0;                   // TCP connections the client made
  // The machine's state, for reading a real result: the 1-minute load
  // average when the trial started (-1 if unknown) and the CPU time the
  // client's process spent (user + system).
  double load_before = -1;
  sim::Duration client_cpu;
  // Simulated time: the steps the driver was given, and the wall time
  // prodsim spent waiting for their answers (the client's share of `wall`).
  uint64_t client_steps = 0;
  sim::Duration client_wait;
  // A real cluster's trial (real_cluster.h): how the trial differs from the
  // scenario as the simulation runs it (said once, before the first
  // trial's line), and the wall time its cluster took to start and to be
  // stopped and read (both within `wall`).
  std::vector<std::string> notes;
  sim::Duration cluster_start;
  sim::Duration cluster_dump;
};

// The 1-minute load average (/proc/loadavg), or -1.
double LoadAverage();

RealOutput RunReal(const scenarios::Scenario& s, const RealOptions& options);

// `prodsim serve`: the world without a client. `on_ready` gets the
// bootstrap address once the ports are open. Runs until the scenario's
// limits.time (not the last heal plus the liveness grace: the user's
// application decides how long it needs) or limits.steps, or until `stop`
// returns true (polled every event-loop round, e.g. a SIGINT flag); then
// the checks that need no client outcomes (log-sequences-contiguous,
// no-duplicates) run over the broker history, and the bridge's counts of
// what it did not serve (malformed frames, records without a prodsim-id,
// limits reached) become notes. `say` gets each limit's first note as it
// happens. Only a harness error of prodsim's own makes the verdict
// harness-error.
struct ServeOptions {
  std::function<void(const std::string& bootstrap)> on_ready;
  std::function<bool()> stop;
  std::function<void(const std::string& note)> say;
};
scenarios::RunOutput Serve(const scenarios::Scenario& s, const ServeOptions& options);

}  // namespace wire

#endif  // PRODSIM_WIRE_REAL_WORLD_H_
