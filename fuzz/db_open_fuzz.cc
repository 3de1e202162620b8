// Fuzz target: bytes -> a file -> TuningDatabase::Open (refusal of foreign, damaged and newer
// files), then ListCandidates (JSON columns parsed back) and IntegrityCheck on what opens.
// SQLite itself is not instrumented (a Debian library): coverage guides through our code.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_util.h"
#include "tune/database.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace switchyard;
  const std::string path = fuzz::WriteScratch("fuzz.sqlite", data, size);
  // A -wal left by the previous input would be replayed into this one.
  ::unlink((path + "-wal").c_str());
  ::unlink((path + "-shm").c_str());
  OpenOptions options;
  options.create_if_missing = false;
  auto db = TuningDatabase::Open(path, options);
  if (!db.ok()) return 0;
  auto list = (*db)->ListCandidates();
  (void)list.ok();
  auto runs = (*db)->ListRuns();
  (void)runs.ok();
  auto check = (*db)->IntegrityCheck();
  (void)check.ok();
  return 0;
}
