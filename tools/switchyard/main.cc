// switchyard: build, tune and ship inference engines for ONNX models.
#include <cstdlib>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>

#include <sched.h>
#include <unistd.h>

#include "commands.h"
#include "io/memory_budget.h"
#include "switchyard/version.h"

namespace switchyard::cli {

int ReportError(const Status& s) {
  std::cerr << "error: " << s.ToString() << "\n";
  return 1;
}

// OpenMP wait policy. Between engine steps libgomp's idle workers either spin (300,000
// iterations: fast on an idle machine, 50-100x slower while other processes hold the
// CPUs) or, whenever a second thread pool exists (the one left by a build or a warm-up on
// another thread), sleep after ~100 spins, which costs a futex wake-up per step (~50 us:
// MobileNetV2 at 2 threads gained nothing from the second thread; runtime/session.h).
// A bounded spin of 3,000 iterations keeps the parallel steps' hand-offs fast and gives
// the CPU back soon under contention (docs/benchmarks.md: ORT/Switchyard 0.76 -> 1.04 on
// MobileNetV2, 0.61 -> 0.98 on EfficientNet-B0; 29 ms instead of 24 ms under contention).
// On more than 4 CPUs the spin is 30,000: waking a sleeping team costs more the larger it
// is, and on the 16-core Xeon host of the GPU machine (threads=16) a 3,000 spin let the
// workers fall asleep between steps: BERT-base 40-46 -> 35-37 ms, SVTR 2.9-10.4 -> 2.1-2.2,
// GPT-2-small 91-101 -> 79-82 at 30,000 (300,000 and OMP_WAIT_POLICY=active no better;
// docs/benchmarks.md, session 9). On 2 quiet cores 3,000 and 30,000 time the same.
// libgomp reads GOMP_SPINCOUNT once, in its constructor, before main (and before libc
// has set up the environment, so .preinit_array cannot set it either): the process sets
// it and executes itself again (same pid, ~30 ms of start-up; tuner workers inherit it).
// Only for the verbs that run engines; a user's GOMP_SPINCOUNT or OMP_WAIT_POLICY wins.
//
// OpenBLAS's own thread pool (OPENBLAS_NUM_THREADS=1 for the verbs that load models or
// engines): the pthread OpenBLAS starts its server threads in its constructor, and they
// spin (sched_yield) for about 2^28 cycles before they sleep. On 2 cores that took one from
// the engine for the process's first ~80 ms: PP-OCR's classifier ran its first 23-25
// timed runs at 3.5 ms instead of 0.6 (`switchyard bench --json`'s latencies_ms), which a
// harness of 10 runs per round, and every tuner worker's measurement, saw. kernel.gemm=
// openblas steps still ask for their threads per call (openblas_set_num_threads, which
// starts them then): ViT-B/16 on that route timed the same with 1 or 2 here. A user's
// OPENBLAS_NUM_THREADS or GOTO_NUM_THREADS wins.
//
// Transparent huge pages for malloc (glibc.malloc.hugetlb=1: glibc madvises its heap and
// mmapped chunks MADV_HUGEPAGE), for the verbs that load models or engines. A build copies
// a model's weights several times (file, protobuf, IR tensors, packed weights, the
// serialised engine) into fresh memory, and on a VM each 4 KiB page fault is expensive:
// ResNet-50's build made 207,000 faults and took 2.9 s on a 2-core EPYC VM, 52,000 and
// 1.7 s with huge pages. glibc reads GLIBC_TUNABLES at start-up only, so this rides on the
// same re-execution. A user's own glibc.malloc.hugetlb setting wins.
void PrepareProcessEnvironment(int argc, char** argv) {
  bool runs_engines = false, loads_models = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    runs_engines |= a == "bench" || a == "tune" || a == "compare" || a == "run" || a == "__worker";
    loads_models |= a == "build" || a == "check" || a == "inspect";
  }
  loads_models |= runs_engines;
  bool spin_set = false, changed = false;
  if (runs_engines && !std::getenv("GOMP_SPINCOUNT") && !std::getenv("OMP_WAIT_POLICY")) {
    cpu_set_t set;
    const int cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
    spin_set = changed = setenv("GOMP_SPINCOUNT", cpus > 4 ? "30000" : "3000", 1) == 0;
  }
  bool blas_set = false;
  if (loads_models && !std::getenv("OPENBLAS_NUM_THREADS") && !std::getenv("GOTO_NUM_THREADS")) {
    blas_set = setenv("OPENBLAS_NUM_THREADS", "1", 1) == 0;
    changed |= blas_set;
  }
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const std::string have = tunables ? tunables : "";
  if (loads_models && have.find("glibc.malloc.hugetlb") == std::string::npos) {
    const std::string want = (have.empty() ? "" : have + ":") + "glibc.malloc.hugetlb=1";
    changed |= setenv("GLIBC_TUNABLES", want.c_str(), 1) == 0;
  }
  if (!changed) return;
  execv("/proc/self/exe", argv);
  // exec failed: run on as is, under the libraries' defaults (the children see no change).
  if (spin_set) unsetenv("GOMP_SPINCOUNT");
  if (blas_set) unsetenv("OPENBLAS_NUM_THREADS");
  if (tunables) setenv("GLIBC_TUNABLES", have.c_str(), 1); else unsetenv("GLIBC_TUNABLES");
}

}  // namespace switchyard::cli

int main(int argc, char** argv) {
  switchyard::cli::PrepareProcessEnvironment(argc, argv);
  CLI::App app{"Switchyard: build, tune and ship inference engines for ONNX models"};
  app.set_version_flag("--version", std::string("switchyard ") + SWITCHYARD_VERSION + " (" +
                                        SWITCHYARD_GIT_COMMIT + ")");
  app.require_subcommand(1);
  // Global options may also follow the verb (`switchyard build M --max-memory 4G`).
  app.fallthrough();
  app.add_option_function<std::string>(
         "--max-memory",
         [](const std::string& text) {
           auto bytes = switchyard::memory_budget::ParseSize(text);
           if (!bytes.ok()) throw CLI::ValidationError("--max-memory", bytes.status().message());
           switchyard::memory_budget::SetLimit(*bytes, "--max-memory " + text);
           // The backstop for allocations no size check covers.
           auto as = switchyard::memory_budget::LimitAddressSpace(*bytes);
           if (!as.ok()) std::cerr << "warning: " << as.status().message() << "\n";
         },
         "memory budget for this process (bytes, or with K/M/G/T, e.g. 512M, 4G): models, engines "
         "and arenas that would exceed it are refused before they are allocated")
      ->type_name("SIZE");
  int exit_code = 0;
  switchyard::cli::AddInspectCommand(app, &exit_code);
  switchyard::cli::AddRunCommand(app, &exit_code);
  switchyard::cli::AddRoutesCommand(app, &exit_code);
  switchyard::cli::AddBuildCommand(app, &exit_code);
  switchyard::cli::AddBenchCommand(app, &exit_code);
  switchyard::cli::AddDbCommand(app, &exit_code);
  switchyard::cli::AddCompareCommand(app, &exit_code);
  switchyard::cli::AddCheckCommand(app, &exit_code);
  switchyard::cli::AddReportCommand(app, &exit_code);
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
  switchyard::cli::AddTuneCommand(app, &exit_code, command_line);
  switchyard::cli::AddReleaseCommands(app, &exit_code, command_line);
  // The verbs run inside parse(). An allocation that fails anyway (a size no check
  // covers, or RLIMIT_AS reached) ends here as a clear error, never a crash.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: " << switchyard::memory_budget::OutOfMemoryMessage() << "\n";
    return 1;
  } catch (const std::length_error& e) {
    std::cerr << "error: " << switchyard::memory_budget::OutOfMemoryMessage(std::string("a size too large (") + e.what() + ")") << "\n";
    return 1;
  } catch (const std::exception& e) {
    // The backstop: a verb's unchecked read of a malformed file (or a bug) ends as a clear
    // error with a non-zero exit, never std::terminate and a core dump.
    std::cerr << "error: " << e.what() << " (an unexpected failure: the command did not finish; please report it)\n";
    return 1;
  }
  return exit_code;
}
