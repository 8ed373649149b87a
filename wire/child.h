// A client process for one wire-mode trial: started in its own process
// group, fed its job on stdin, read line by line on stdout, its stderr kept
// (the last kStderrKeptBytes), and always gone when the Child is.
//
// Nothing is left behind: prodsim forks a keeper for the trial, which the
// kernel kills if prodsim dies (PR_SET_PDEATHSIG), and the keeper starts
// the client in a PID namespace of its own where it may (root), as a child
// subreaper everywhere: whatever the client starts, even in a session of
// its own, is killed and reaped when the client exits or is killed, and
// the keeper then exits as the client did (child.cc, KeepTrial). Kill()
// asks the keeper to end the tree; the destructor kills and reaps. The
// pipes are non-blocking and served by the EventLoop; a grandchild that
// held the client's stdout is gone with the client, so the read side ends.
#ifndef PRODSIM_WIRE_CHILD_H_
#define PRODSIM_WIRE_CHILD_H_

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "sim/core/time.h"
#include "wire/event_loop.h"

namespace wire {

inline constexpr size_t kStderrKeptBytes = size_t{64} * 1024;
// A stdout line longer than this is cut there (and counts as garbage for
// the protocol reader): a runaway client cannot fill prodsim's memory.
inline constexpr size_t kLineBytesMax = 1 << 20;

class Child {
 public:
  struct Spec {
    std::vector<std::string> argv;  // argv[0] is the program (a path, or a name on PATH)
    std::string stdin_text;         // written, then stdin is closed (unless kept open)
    // Set in the child's environment (over prodsim's own), e.g. the
    // LD_LIBRARY_PATH of a client version.
    std::vector<std::pair<std::string, std::string>> env;
    // Simulated time: stdin stays open for Write (the lockstep protocol).
    bool keep_stdin_open = false;
  };
  using LineCallback = absl::AnyInvocable<void(std::string line)>;

  // REQUIRES: `loop` outlives the Child.
  static absl::StatusOr<std::unique_ptr<Child>> Start(EventLoop& loop, const Spec& spec,
                                                      LineCallback on_line);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  // Reaps the child if it has exited; true once it has. Its stdout may still
  // hold unread lines: stdout_closed() says when every line was delivered.
  bool Poll();
  bool exited() const { return exited_; }
  bool stdout_closed() const { return stdout_fd_ < 0; }
  // Appends to what is written to stdin (REQUIRES: keep_stdin_open); the
  // event loop writes it as the pipe takes it. Dropped once stdin is gone
  // (the client closed it or exited).
  void Write(std::string_view text);
  // Everything asked for was written (or stdin is gone).
  bool stdin_drained() const { return stdin_fd_ < 0 || written_ == to_write_.size(); }
  // SIGKILL to the process group (idempotent); `killed()` remembers it.
  void Kill();
  bool killed() const { return killed_; }
  // After exited(): the exit code, or the signal that ended it.
  std::optional<int> exit_code() const { return exit_code_; }
  std::optional<int> signal() const { return signal_; }
  const std::string& stderr_text() const { return stderr_; }
  // After exited(): the CPU time (user + system) the child and the
  // descendants it waited for spent.
  sim::Duration cpu() const { return cpu_; }

 private:
  Child(EventLoop& loop, LineCallback on_line) : loop_(loop), on_line_(std::move(on_line)) {}
  void OnStdout();
  void OnStderr();
  void OnStdin();
  void CloseFd(int* fd);

  EventLoop& loop_;
  LineCallback on_line_;
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  int pidfd_ = -1;  // readable when the child exits (pidfd_open), or -1: polled
  std::string to_write_;
  size_t written_ = 0;
  bool keep_stdin_open_ = false;
  bool stdin_armed_ = true;  // EPOLLOUT registered
  std::string partial_line_;
  std::string stderr_;
  bool exited_ = false;
  bool killed_ = false;
  std::optional<int> exit_code_;
  std::optional<int> signal_;
  sim::Duration cpu_;
};

}  // namespace wire

#endif  // PRODSIM_WIRE_CHILD_H_
