// Fuzz target: engine file bytes -> DeserializeEngine -> LoadedEngine::Create (kernel
// creation from the steps' attributes and params). The input is the engine *without* its
// trailing SHA-256: the target appends the correct digest, so that mutations reach the
// parser behind the checksum instead of all stopping at "checksum mismatch" (the checksum
// check itself is exercised by inputs of under 32 bytes after the magic, and by the unit
// tests). Tool-version and target checks are off so that seed engines stay loadable.
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/engine.h"
#include "io/sha256.h"
#include "runtime/session.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace switchyard;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  bytes += Sha256Raw(bytes.data(), bytes.size());
  EngineLoadOptions options;
  options.check_tool_version = false;
  options.check_target = false;
  Result<Engine> e = DeserializeEngine(bytes, "fuzz.engine", options);
  if (!e.ok()) return 0;
  auto loaded = LoadedEngine::Create(std::move(e).value());
  (void)loaded.ok();
  return 0;
}
