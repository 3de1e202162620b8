// Test builds only: the knob `test.fault` (none|crash|hang|oom|build_error) and the worker
// hook that carries it out, so that tests can prove that a crashing, hanging or
// memory-exhausting candidate is recorded and the tuner's search goes on. Linked into
// `switchyard_faulty` (tests/CMakeLists.txt), never into the shipped `switchyard`.
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "route/knobs.h"
#include "tune/worker.h"

namespace switchyard {
namespace {

void InjectFault(const RouteSpace& space, const Route& route) {
  if (!space.Find("test.fault")) return;
  const std::string fault = space.Value(route, "test.fault");
  if (fault == "crash") {
    std::raise(SIGSEGV);
  } else if (fault == "hang") {
    while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
  } else if (fault == "oom") {
    // Touch memory until the allocation fails or the child's memory limit kills it.
    std::vector<char*> blocks;
    while (true) {
      char* p = static_cast<char*>(std::malloc(64 << 20));
      if (p == nullptr) std::abort();
      std::memset(p, 1, 64 << 20);
      blocks.push_back(p);
    }
  } else if (fault == "oom_new") {
    // Through operator new: std::bad_alloc, which the CLI reports as out of memory (naming
    // the --max-memory limit where one is set), exit 1.
    std::vector<std::unique_ptr<char[]>> blocks;
    while (true) {
      blocks.push_back(std::make_unique<char[]>(64 << 20));
      std::memset(blocks.back().get(), 1, 64 << 20);
    }
  } else if (fault == "build_error") {
    std::exit(3);  // a worker that exits without a result
  }
}

struct Register {
  Register() {
    route::RegisterTestKnob(
        {"test.fault",
         [](const Target&) -> std::vector<std::string> { return {"none", "crash", "hang", "oom", "oom_new", "build_error"}; },
         [](const Target&) -> std::string { return "none"; },
         "Test builds only: makes the candidate's worker crash (SIGSEGV), hang, exhaust memory or exit "
         "without a result. Default none.",
         [](const route::GraphIndex&) -> std::optional<std::vector<std::string>> {
           return std::vector<std::string>{};
         }});
    SetWorkerFaultHook(&InjectFault);
  }
} register_fault_injection;

}  // namespace
}  // namespace switchyard
