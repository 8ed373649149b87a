#include "wire/child.h"

#include <fcntl.h>
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

namespace wire {
namespace {

bool SetNonBlocking(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
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
    execvpe(args[0], args.data(), envp.data());
    const int e = errno;
    [[maybe_unused]] const ssize_t w = write(exec_status[1], &e, sizeof e);
    _exit(127);
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
  if (!exited_) {
    Kill();
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  // Whatever the client left in its group (a helper process it forked).
  if (pid_ > 0) kill(-pid_, SIGKILL);
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
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
}

void Child::OnStdin() {
  while (written_ < to_write_.size()) {
    const ssize_t n = write(stdin_fd_, to_write_.data() + written_, to_write_.size() - written_);
    if (n > 0) {
      written_ += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EAGAIN) return;
    break;  // EPIPE: the client does not read its job
  }
  CloseFd(&stdin_fd_);
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
      if (stderr_.size() > 2 * kStderrKeptBytes) stderr_.erase(0, stderr_.size() - kStderrKeptBytes);
      continue;
    }
    if (n < 0 && errno == EAGAIN) return;
    break;
  }
  CloseFd(&stderr_fd_);
}

}  // namespace wire
