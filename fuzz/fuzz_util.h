// Helpers shared by the fuzz targets: a private scratch folder (in /dev/shm when present, so
// that the file-based readers cost no disk I/O) and writing the input bytes to a file there.
// One fuzzer process runs one input at a time, so the folder needs no locking.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace switchyard::fuzz {

// A folder unique to this process, created on first use and removed at exit.
inline const std::string& ScratchDir() {
  static const std::string dir = [] {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path base = fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm")
                                                           : fs::temp_directory_path();
    std::string tmpl = (base / "sy_fuzz_XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    static const std::string to_remove = tmpl;
    std::atexit([] {
      std::error_code e;
      std::filesystem::remove_all(to_remove, e);
    });
    return tmpl;
  }();
  return dir;
}

inline std::string WriteScratch(const std::string& name, const uint8_t* data, size_t size) {
  const std::string path = ScratchDir() + "/" + name;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

}  // namespace switchyard::fuzz
