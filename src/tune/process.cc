#include "tune/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#if defined(__SANITIZE_ADDRESS__)
#define SWITCHYARD_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SWITCHYARD_ASAN 1
#endif
#endif

namespace switchyard {

std::string ChildResult::Describe() const {
  std::ostringstream os;
  if (cancelled) {
    os << "abandoned after " << wall_s << " s (the tuner was asked to stop)";
  } else if (timed_out) {
    os << "timed out after " << wall_s << " s (killed)";
  } else if (signal != 0) {
    os << "killed by signal " << signal << " (" << strsignal(signal) << ")";
    if (signal == SIGKILL) os << " - possibly out of memory";
  } else {
    os << "exit code " << exit_code;
  }
  return os.str();
}

Result<std::string> SelfExecutable() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return Status::Internal(std::string("cannot read /proc/self/exe: ") + strerror(errno));
  return std::string(buf, static_cast<size_t>(n));
}

namespace {

std::string Tail(const std::string& path, size_t max_bytes) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return "";
  const std::streamoff size = f.tellg();
  const std::streamoff start = size > static_cast<std::streamoff>(max_bytes) ? size - static_cast<std::streamoff>(max_bytes) : 0;
  f.seekg(start);
  std::string s(static_cast<size_t>(size - start), '\0');
  f.read(s.data(), static_cast<std::streamsize>(s.size()));
  return s;
}

}  // namespace

Result<ChildResult> RunChild(const ChildOptions& options) {
  if (options.argv.empty()) return Status::Invalid("RunChild: empty argv");
  // Everything the child needs is prepared before fork: between fork and exec only
  // async-signal-safe calls are allowed (the parent may run OpenMP/oneDNN threads).
  std::vector<char*> argv;
  for (const std::string& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::string log = options.log_path.empty() ? "/dev/null" : options.log_path;
  const int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (log_fd < 0) return Status::IoError("cannot open child log '" + log + "': " + strerror(errno));
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t parent = getpid();
  struct rlimit lim {};
  lim.rlim_cur = lim.rlim_max = static_cast<rlim_t>(options.memory_limit_bytes);

  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    close(log_fd);
    if (null_fd >= 0) close(null_fd);
    return Status::Internal(std::string("fork failed: ") + strerror(errno));
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the parent died before prctl took effect
    // RLIMIT_AS cannot hold AddressSanitizer's shadow memory (terabytes of reserved
    // address space): sanitized builds skip the limit rather than abort every child.
#if !defined(SWITCHYARD_ASAN)
    if (options.memory_limit_bytes > 0) setrlimit(RLIMIT_AS, &lim);
#endif
    if (null_fd >= 0) dup2(null_fd, 0);
    dup2(log_fd, 1);
    dup2(log_fd, 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(log_fd);
  if (null_fd >= 0) close(null_fd);
  setpgid(pid, pid);  // also from the parent side, so the kill below never misses

  ChildResult r;
  int status = 0;
  auto sleep = std::chrono::milliseconds(1);
  while (true) {
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return Status::Internal(std::string("waitpid: ") + strerror(errno));
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const bool cancel = options.cancel && options.cancel->load();
    if (cancel || (options.timeout_s > 0 && elapsed > options.timeout_s)) {
      (cancel ? r.cancelled : r.timed_out) = true;
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, std::chrono::milliseconds(20));
  }
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  if (!options.log_path.empty()) r.log_tail = Tail(options.log_path, 2000);
  return r;
}

}  // namespace switchyard
