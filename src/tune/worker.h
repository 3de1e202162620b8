// The tuner's child side: one `switchyard __worker JOB RESULT` process per candidate
// (and for profiling and validating the winner). The job is a JSON file written by the
// tuner; the worker writes its result JSON atomically to RESULT and exits 0, also when
// the candidate failed (build error, accuracy, run error: data, not crashes). A crash,
// hang or out-of-memory shows up in the parent as a missing result (see process.h).
// Job and result fields: docs/tuner.md ("Worker protocol").
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "route/route.h"
#include "switchyard/status.h"

namespace switchyard {

// Called in the candidate phase after the route is parsed, before the build. Test builds
// install one that injects faults for a test-only knob; production binaries never do.
using WorkerFaultHook = void (*)(const RouteSpace& space, const Route& route);
void SetWorkerFaultHook(WorkerFaultHook hook);

// Runs one job. Errors only when the job itself is unusable (unreadable, malformed) or
// the result cannot be written; candidate failures are results.
Status RunWorkerJob(const std::string& job_path, const std::string& result_path);

// Runs a job given as JSON and returns the result object (what RunWorkerJob writes).
nlohmann::json RunWorker(const nlohmann::json& job);

}  // namespace switchyard
