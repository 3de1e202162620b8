// Child processes for candidate isolation: the tuner builds and runs every candidate in a
// child (a `switchyard __worker` process) so that a crash, hang or out-of-memory of a
// candidate becomes a recorded result instead of the end of the search. The child dies
// with its parent (PR_SET_PDEATHSIG), so `kill -9` of the tuner leaves no orphans.
// Thread-safe (no shared state); blocks the calling thread until the child ends.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "switchyard/status.h"

namespace switchyard {

struct ChildOptions {
  std::vector<std::string> argv;  // argv[0] is the executable's path
  double timeout_s = 0;           // 0 = none; then SIGKILL (whole process group)
  int64_t memory_limit_bytes = 0; // 0 = none; RLIMIT_AS of the child
  std::string log_path;           // stdout and stderr of the child ("" = /dev/null)
  // When set to true while the child runs, the child is killed (the tuner's SIGTERM).
  const std::atomic<bool>* cancel = nullptr;
};

struct ChildResult {
  int exit_code = -1;    // when it exited normally
  int signal = 0;        // when a signal ended it (SIGKILL after a timeout too)
  bool timed_out = false;
  bool cancelled = false;  // killed because *cancel became true
  double wall_s = 0;
  std::string log_tail;  // last bytes of the log (for error messages)
  // "exit code 3", "killed by signal 11 (Segmentation fault)", "timed out after 5 s".
  std::string Describe() const;
};

// Starts argv and waits for it. Errors only when the child cannot be started at all.
Result<ChildResult> RunChild(const ChildOptions& options);

// The path of the running executable (/proc/self/exe).
Result<std::string> SelfExecutable();

}  // namespace switchyard
