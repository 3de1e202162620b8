// A plain driver for the fuzz targets, linked into the ordinary (g++, uninstrumented)
// build so that CI runs every target briefly: it replays each file of the given corpus
// folders through LLVMFuzzerTestOneInput, then feeds it random mutations of those files
// (bit flips, byte overwrites with interesting values, insertions, deletions, truncations
// and splices of two entries) for a time budget. Not coverage-guided and not sanitized:
// the libFuzzer build (scripts/fuzz.sh) is the real fuzzer; this catches crashes, traps
// and hangs (ctest's timeout) on every commit.
//
//   fuzz_replay_NAME [--seconds S] [--seed N] [--max-len BYTES] DIR_OR_FILE...
//
// Prints the counts; a crash ends the process (the input that caused it is written to
// ./fuzz-replay-crash-NAME first, so the finding can be turned into a regression test).
#include <algorithm>
#include <csignal>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<uint8_t> g_current;  // the input being run, for the crash handler
const char* g_name = "target";

void OnCrash(int sig) {
  char path[256];
  std::snprintf(path, sizeof(path), "fuzz-replay-crash-%s", g_name);
  if (FILE* f = std::fopen(path, "wb")) {
    std::fwrite(g_current.data(), 1, g_current.size(), f);
    std::fclose(f);
  }
  std::fprintf(stderr, "fuzz_replay %s: signal %d on a %zu-byte input, written to %s\n", g_name, sig,
               g_current.size(), path);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void Run(const std::vector<uint8_t>& input) {
  g_current = input;
  LLVMFuzzerTestOneInput(input.data(), input.size());
}

std::vector<uint8_t> Mutate(const std::vector<std::vector<uint8_t>>& corpus, std::mt19937_64& rng,
                            size_t max_len) {
  std::vector<uint8_t> x = corpus[rng() % corpus.size()];
  static const uint8_t kInteresting[] = {0x00, 0x01, 0x7F, 0x80, 0xFF, 0x10, 0x40, 0x20};
  const int edits = 1 + static_cast<int>(rng() % 8);
  for (int e = 0; e < edits; ++e) {
    const size_t pos = x.empty() ? 0 : rng() % x.size();
    switch (rng() % 6) {
      case 0:
        if (!x.empty()) x[pos] ^= static_cast<uint8_t>(1u << (rng() % 8));
        break;
      case 1:
        if (!x.empty()) x[pos] = kInteresting[rng() % std::size(kInteresting)];
        break;
      case 2:
        if (x.size() < max_len) x.insert(x.begin() + static_cast<long>(pos), static_cast<uint8_t>(rng()));
        break;
      case 3:
        if (!x.empty()) x.erase(x.begin() + static_cast<long>(pos));
        break;
      case 4:
        if (!x.empty()) x.resize(rng() % x.size());
        break;
      case 5: {  // splice: the tail of another entry from `pos` on
        const std::vector<uint8_t>& other = corpus[rng() % corpus.size()];
        if (!other.empty()) {
          const size_t from = rng() % other.size();
          x.resize(std::min(pos, x.size()));
          x.insert(x.end(), other.begin() + static_cast<long>(from), other.end());
        }
        break;
      }
    }
  }
  if (x.size() > max_len) x.resize(max_len);
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 5;
  uint64_t seed = 1;
  size_t max_len = 1 << 20;
  std::vector<std::string> paths;
  const std::string self = std::filesystem::path(argv[0]).filename().string();
  static std::string name = self.rfind("fuzz_replay_", 0) == 0 ? self.substr(12) : self;
  g_name = name.c_str();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (a == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--max-len" && i + 1 < argc) {
      max_len = std::strtoull(argv[++i], nullptr, 10);
    } else {
      paths.push_back(a);
    }
  }
  std::vector<std::vector<uint8_t>> corpus;
  for (const std::string& p : paths) {
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(p, ec)) {
      for (const auto& entry : std::filesystem::directory_iterator(p, ec)) files.push_back(entry.path());
    } else {
      files.emplace_back(p);
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      if (!in) {
        std::fprintf(stderr, "fuzz_replay %s: cannot read '%s'\n", g_name, f.c_str());
        return 2;
      }
      corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
  }
  if (corpus.empty()) {
    std::fprintf(stderr, "fuzz_replay %s: no corpus files in the given paths\n", g_name);
    return 2;
  }
  for (int sig : {SIGSEGV, SIGABRT, SIGILL, SIGFPE, SIGBUS, SIGTRAP}) std::signal(sig, OnCrash);
  for (const auto& input : corpus) Run(input);
  std::mt19937_64 rng(seed);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  uint64_t mutations = 0;
  while (std::chrono::steady_clock::now() < end) {
    Run(Mutate(corpus, rng, max_len));
    ++mutations;
  }
  std::printf("fuzz_replay %s: %zu corpus inputs replayed, %llu random mutations in %.1f s (seed %llu), "
              "no crash\n", g_name, corpus.size(), static_cast<unsigned long long>(mutations), seconds,
              static_cast<unsigned long long>(seed));
  return 0;
}
