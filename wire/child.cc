#include "wire/child.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/assert.h"

namespace wire {
namespace {

bool SetNonBlocking(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

// --- The trial's keeper --------------------------------------------------------
//
// The process prodsim forks for a trial does not exec the client itself: it
// keeps the trial, so that nothing the client starts outlives it, whatever
// it does (a grandchild that calls setsid() leaves the process group, and
// one that holds the client's stdout would keep the trial open to its
// bound). Where it may (root: CAP_SYS_ADMIN) it makes a new PID namespace,
// in which the client is process 1: when the client exits, or the keeper
// dies, the kernel kills everything else in it. Everywhere it is also a
// child subreaper (PR_SET_CHILD_SUBREAPER): what the client orphans is
// re-parented to the keeper, which kills and reaps it when the client has
// exited, then exits as the client did (its code, or its signal). SIGTERM
// (Child::Kill) makes it kill the whole tree at once.
//
// Everything here runs between fork and exec in a copy of a multithreaded
// process, so it uses system calls only (no malloc, no stdio).

volatile sig_atomic_t g_keeper_stop = 0;
void KeeperStop(int) { g_keeper_stop = 1; }

// SIGKILL to every process whose parent is the keeper; the number sent.
int KillKeeperChildren(pid_t keeper) {
  const int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return 0;
  int killed = 0;
  alignas(8) char buf[8192];
  for (;;) {
    const long n = syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      const auto* d = reinterpret_cast<const struct dirent64*>(buf + at);
      at += d->d_reclen;
      pid_t pid = 0;
      bool digits = d->d_name[0] != '\0';
      for (const char* c = d->d_name; *c != '\0'; ++c) {
        if (*c < '0' || *c > '9')
          digits = false;
        else
          pid = pid * 10 + (*c - '0');
      }
      if (!digits || pid == keeper) continue;
      // /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces
      // and parentheses, so the ppid is read after the last ')'.
      char path[64] = "/proc/";
      size_t len = 6;
      for (const char* c = d->d_name; *c != '\0' && len < sizeof path - 6; ++c) path[len++] = *c;
      for (const char* c = "/stat"; *c != '\0'; ++c) path[len++] = *c;
      path[len] = '\0';
      const int fd = open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      char stat[512];
      const ssize_t got = read(fd, stat, sizeof stat - 1);
      close(fd);
      if (got <= 0) continue;
      ssize_t close_paren = -1;
      for (ssize_t i = 0; i < got; ++i) {
        if (stat[i] == ')') close_paren = i;
      }
      if (close_paren < 0 || close_paren + 4 >= got) continue;
      pid_t ppid = 0;
      for (ssize_t i = close_paren + 4; i < got && stat[i] >= '0' && stat[i] <= '9'; ++i) {
        ppid = ppid * 10 + (stat[i] - '0');
      }
      if (ppid == keeper && kill(pid, SIGKILL) == 0) ++killed;
    }
  }
  close(dir);
  return killed;
}

// Kills the keeper's children until it has none, reaping each.
void EndTree(pid_t keeper, pid_t client) {
  if (client > 0) kill(-client, SIGKILL);  // the client's own group first
  for (;;) {
    KillKeeperChildren(keeper);
    int status = 0;
    const pid_t r = waitpid(-1, &status, 0);
    if (r < 0 && errno == ECHILD) return;
  }
}

// The client, in the keeper's fork: killed when its parent dies, in a
// process group of its own (Kill reaches the group), SIGTERM as any
// program has it. Writes its errno to `exec_status` if exec fails.
// In the forked child, the exec status pipe's descriptor: the one after
// the standard streams, every descriptor above it closed (CloseFrom).
constexpr int kExecStatusFd = 3;

// Closes every descriptor from `first` on (async-signal-safe).
void CloseFrom(int first) {
  if (syscall(SYS_close_range, static_cast<unsigned>(first), ~0U, 0U) == 0) return;
  rlimit lim{};
  const rlim_t top = getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY
                         ? std::min<rlim_t>(lim.rlim_cur, 1 << 20)
                         : 65536;
  for (rlim_t fd = static_cast<rlim_t>(first); fd < top; ++fd) close(static_cast<int>(fd));
}

[[noreturn]] void ExecClient(char* const* argv, char* const* envp, int exec_status) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  setpgid(0, 0);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGTERM, &dfl, nullptr);
  execvpe(argv[0], argv, envp);
  const int e = errno;
  [[maybe_unused]] const ssize_t w = write(exec_status, &e, sizeof e);
  _exit(127);
}

// Exits as a process with wait status `status` ended: its exit code, or
// dying of its signal (the keeper is never a namespace's process 1, whose
// own signals the kernel would ignore).
[[noreturn]] void ExitAs(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, nullptr);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    sigprocmask(SIG_UNBLOCK, &only, nullptr);
    kill(getpid(), sig);
    _exit(128 + sig);  // a signal that does not end a process
  }
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 127);
}

// Waits for `pid`, reaping whatever else ends meanwhile (orphans
// re-parented to this subreaper, or to a namespace's process 1); its wait
// status, or -1 when SIGTERM came first.
int WaitFor(pid_t pid) {
  for (;;) {
    if (g_keeper_stop) return -1;
    int status = 0;
    const pid_t r = waitpid(-1, &status, 0);
    if (r == pid) return status;
    if (r < 0 && errno == ECHILD) return 0;  // cannot happen: `pid` is ours
  }
}

// In a PID namespace of its own: its process 1 starts the client and, once
// the client has ended, hands its wait status to the keeper and exits,
// which makes the kernel kill everything else in the namespace; SIGTERM
// kills process 1, with the same effect. The client is never process 1
// itself: signals it sends itself, SIGPIPE among them, would be ignored.
[[noreturn]] void KeepInNamespace(char* const* argv, char* const* envp, int exec_status) {
  int status_pipe[2];
  if (pipe2(status_pipe, O_CLOEXEC) != 0) _exit(127);
  const pid_t init = fork();
  if (init < 0) _exit(127);
  if (init == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    close(status_pipe[0]);
    const pid_t client = fork();
    if (client < 0) _exit(127);
    if (client == 0) ExecClient(argv, envp, exec_status);
    close(exec_status);
    for (int fd = 0; fd <= 2; ++fd) close(fd);
    const int status = WaitFor(client);
    [[maybe_unused]] const ssize_t w = write(status_pipe[1], &status, sizeof status);
    _exit(0);
  }
  close(status_pipe[1]);
  close(exec_status);
  for (int fd = 0; fd <= 2; ++fd) close(fd);
  if (WaitFor(init) < 0) {
    kill(init, SIGKILL);  // the namespace dies with its process 1
    int ignored = 0;
    waitpid(init, &ignored, 0);
    kill(getpid(), SIGKILL);
  }
  int status = 0;
  if (read(status_pipe[0], &status, sizeof status) != sizeof status) status = SIGKILL;
  ExitAs(status);
}

// Without a namespace: the keeper is the client's subreaper, and kills and
// reaps what the client left once it has ended.
[[noreturn]] void KeepAsSubreaper(char* const* argv, char* const* envp, int exec_status) {
  const pid_t keeper = getpid();
  const pid_t client = fork();
  if (client < 0) _exit(127);
  if (client == 0) {
    if (getppid() != keeper) _exit(127);  // the keeper died before the prctl
    ExecClient(argv, envp, exec_status);
  }
  close(exec_status);
  for (int fd = 0; fd <= 2; ++fd) close(fd);
  const int status = WaitFor(client);
  if (status < 0) {
    EndTree(keeper, client);
    kill(keeper, SIGKILL);
  }
  EndTree(keeper, 0);
  ExitAs(status);
}

[[noreturn]] void KeepTrial(char* const* argv, char* const* envp, int exec_status) {
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  struct sigaction stop {};
  stop.sa_handler = KeeperStop;
  sigaction(SIGTERM, &stop, nullptr);
  if (unshare(CLONE_NEWPID) == 0) KeepInNamespace(argv, envp, exec_status);
  KeepAsSubreaper(argv, envp, exec_status);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Child>> Child::Start(EventLoop& loop, const Spec& spec,
                                                    LineCallback on_line) {
  if (spec.argv.empty()) return absl::InvalidArgumentError("no client command");
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0) return absl::InternalError("pipe");
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    return absl::InternalError("pipe");
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    for (int fd : {in[0], in[1], out[0], out[1]}) close(fd);
    return absl::InternalError("pipe");
  }
  // The exec status: closed by a successful exec (O_CLOEXEC), else the
  // child writes its errno there.
  int exec_status[2];
  if (pipe2(exec_status, O_CLOEXEC) != 0) {
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) close(fd);
    return absl::InternalError("pipe");
  }
  std::vector<char*> args;
  for (const std::string& a : spec.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The environment, built before fork (only async-signal-safe calls after):
  // prodsim's own, each of spec.env replacing a variable of its name.
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view var(*e);
    const bool replaced = std::any_of(spec.env.begin(), spec.env.end(), [&](const auto& kv) {
      return var.size() > kv.first.size() && var.substr(0, kv.first.size()) == kv.first &&
             var[kv.first.size()] == '=';
    });
    if (!replaced) env_text.emplace_back(var);
  }
  for (const auto& [k, v] : spec.env) env_text.push_back(absl::StrCat(k, "=", v));
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1], exec_status[0], exec_status[1]}) {
      close(fd);
    }
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    // The child: its own process group; killed with prodsim; the pipes as
    // its standard streams. Only async-signal-safe calls from here on.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // prodsim died before the prctl
    // prodsim ignores SIGPIPE (it writes to sockets and pipes whose other
    // end may be gone); an ignored disposition survives exec, and the client
    // must start as any program does.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGPIPE, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    // Nothing else of prodsim's stays open here. The keeper never execs, so
    // O_CLOEXEC does not close what it inherited: another trial's pipes,
    // made by another thread just before this fork, would stay open in it
    // for as long as this trial runs, and that trial's read of its exec
    // status (or of its client's output) would wait for this one's end.
    int status_fd = exec_status[1];
    if (status_fd != kExecStatusFd) {
      if (dup3(status_fd, kExecStatusFd, O_CLOEXEC) < 0) _exit(127);
      status_fd = kExecStatusFd;
    }
    CloseFrom(kExecStatusFd + 1);
    KeepTrial(args.data(), envp.data(), status_fd);  // never returns
  }
  close(exec_status[1]);
  int exec_errno = 0;
  ssize_t got;
  do {
    got = read(exec_status[0], &exec_errno, sizeof exec_errno);
  } while (got < 0 && errno == EINTR);
  close(exec_status[0]);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    int status = 0;
    waitpid(pid, &status, 0);
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat("cannot execute ", spec.argv[0], ": ", std::strerror(exec_errno)));
  }
  setpgid(pid, pid);  // also from here: whichever runs first
  close(in[0]);
  close(out[1]);
  close(err[1]);
  std::unique_ptr<Child> c(new Child(loop, std::move(on_line)));
  c->pid_ = pid;
  c->stdin_fd_ = in[1];
  c->stdout_fd_ = out[0];
  c->stderr_fd_ = err[0];
  c->to_write_ = spec.stdin_text;
  c->keep_stdin_open_ = spec.keep_stdin_open;
  for (int fd : {c->stdin_fd_, c->stdout_fd_, c->stderr_fd_}) SetNonBlocking(fd);
  Child* self = c.get();
  absl::Status st = loop.Add(c->stdout_fd_, EPOLLIN, [self](uint32_t) { self->OnStdout(); });
  if (st.ok()) st = loop.Add(c->stderr_fd_, EPOLLIN, [self](uint32_t) { self->OnStderr(); });
  if (st.ok()) st = loop.Add(c->stdin_fd_, EPOLLOUT, [self](uint32_t) { self->OnStdin(); });
  const long pidfd = syscall(SYS_pidfd_open, pid, 0);
  if (pidfd >= 0) {
    c->pidfd_ = static_cast<int>(pidfd);
    if (st.ok()) st = loop.Add(c->pidfd_, EPOLLIN, [self](uint32_t) { self->Poll(); });
  }
  if (!st.ok()) return st;  // the destructor kills and reaps
  return c;
}

Child::~Child() {
  if (!exited_ && pid_ > 0) {
    Kill();
    // The keeper ends the client's tree and exits at once; a keeper that
    // has not within a second is killed (its client dies with it).
    int status = 0;
    pid_t r = 0;
    for (int i = 0; i < 100 && r == 0; ++i) {
      r = waitpid(pid_, &status, WNOHANG);
      if (r == 0) usleep(10000);
    }
    if (r == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
  }
  for (int* fd : {&stdin_fd_, &stdout_fd_, &stderr_fd_, &pidfd_}) CloseFd(fd);
}

void Child::CloseFd(int* fd) {
  if (*fd < 0) return;
  loop_.Remove(*fd);
  close(*fd);
  *fd = -1;
}

bool Child::Poll() {
  if (exited_) return true;
  int status = 0;
  struct rusage ru {};
  const pid_t r = wait4(pid_, &status, WNOHANG, &ru);
  if (r != pid_) return false;
  exited_ = true;
  cpu_ = sim::Duration::Micros(static_cast<int64_t>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
                                   1000000 +
                               ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  if (WIFEXITED(status)) exit_code_ = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) signal_ = WTERMSIG(status);
  if (pidfd_ >= 0) CloseFd(&pidfd_);
  return true;
}

void Child::Kill() {
  if (exited_ || pid_ <= 0) return;
  killed_ = true;
  // The keeper kills the client's whole tree and then itself (KeepTrial).
  kill(pid_, SIGTERM);
}

void Child::Write(std::string_view text) {
  PRODSIM_ASSERT(keep_stdin_open_);
  if (stdin_fd_ < 0) return;
  if (written_ == to_write_.size()) {
    to_write_.clear();
    written_ = 0;
  }
  to_write_.append(text);
  OnStdin();
}

void Child::OnStdin() {
  while (written_ < to_write_.size()) {
    const ssize_t n = write(stdin_fd_, to_write_.data() + written_, to_write_.size() - written_);
    if (n > 0) {
      written_ += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      if (!stdin_armed_ && loop_.Modify(stdin_fd_, EPOLLOUT).ok()) stdin_armed_ = true;
      return;
    }
    CloseFd(&stdin_fd_);  // EPIPE: the client does not read its stdin
    return;
  }
  if (!keep_stdin_open_) {
    CloseFd(&stdin_fd_);
    return;
  }
  // Kept open: nothing to write until Write, so no EPOLLOUT (a pipe with
  // room would report it at every wait).
  if (stdin_armed_ && loop_.Modify(stdin_fd_, 0).ok()) stdin_armed_ = false;
}

void Child::OnStdout() {
  char buf[65536];
  for (;;) {
    const ssize_t n = read(stdout_fd_, buf, sizeof buf);
    if (n > 0) {
      for (ssize_t i = 0; i < n; ++i) {
        if (buf[i] == '\n') {
          on_line_(std::exchange(partial_line_, {}));
        } else if (partial_line_.size() < kLineBytesMax) {
          partial_line_.push_back(buf[i]);
        }
      }
      continue;
    }
    if (n < 0 && errno == EAGAIN) return;
    break;  // EOF or an error
  }
  if (!partial_line_.empty()) on_line_(std::exchange(partial_line_, {}));
  CloseFd(&stdout_fd_);
}

void Child::OnStderr() {
  char buf[65536];
  for (;;) {
    const ssize_t n = read(stderr_fd_, buf, sizeof buf);
    if (n > 0) {
      stderr_.append(buf, static_cast<size_t>(n));
      if (stderr_.size() > 2 * kStderrKeptBytes)
        stderr_.erase(0, stderr_.size() - kStderrKeptBytes);
      continue;
    }
    if (n < 0 && errno == EAGAIN) return;
    break;
  }
  CloseFd(&stderr_fd_);
}

}  // namespace wire
