#include "io/memory_budget.h"

#include <sys/resource.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>

#if defined(__SANITIZE_ADDRESS__)
#define SY_BUDGET_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SY_BUDGET_ASAN 1
#endif
#endif

namespace switchyard::memory_budget {
namespace {

std::atomic<int64_t> g_limit{0};
std::mutex g_origin_mu;
std::string g_origin;  // guarded by g_origin_mu

std::string OriginSuffix() {
  std::lock_guard<std::mutex> lock(g_origin_mu);
  return g_origin.empty() ? std::string() : " (" + g_origin + ")";
}

int64_t MappedAddressSpace() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmSize:", 0) == 0) return std::atoll(line.c_str() + 7) * 1024;
  }
  return 0;
}

}  // namespace

Result<int64_t> ParseSize(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return Status::Invalid("memory size '" + text + "' " + why +
                           "; use bytes or a number with K, M, G or T (powers of 1024), e.g. 512M or 4G");
  };
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  const std::string number = text.substr(0, i);
  std::string unit = text.substr(i);
  if (number.empty() || number == "." || number.find('.') != number.rfind('.')) {
    return bad("is not a number");
  }
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() >= 2 && unit.compare(unit.size() - 2, 2, "IB") == 0) unit.erase(unit.size() - 2);
  else if (unit.size() == 2 && unit[1] == 'B') unit.erase(1);
  int shift = 0;
  if (unit.empty() || unit == "B") shift = 0;
  else if (unit == "K") shift = 10;
  else if (unit == "M") shift = 20;
  else if (unit == "G") shift = 30;
  else if (unit == "T") shift = 40;
  else return bad("has an unknown unit '" + text.substr(i) + "'");
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  if (errno || end != number.c_str() + number.size() || !std::isfinite(v)) return bad("is not a number");
  const double bytes = std::ldexp(v, shift);
  if (bytes < 1) return bad("is less than one byte");
  if (bytes >= std::ldexp(1.0, 62)) return bad("is too large");
  return static_cast<int64_t>(bytes);
}

std::string FormatBytes(int64_t bytes) {
  static const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f %s", v, kUnits[u]);
  return std::string(buf) + " (" + std::to_string(bytes) + " bytes)";
}

void SetLimit(int64_t bytes, const std::string& origin) {
  g_limit.store(bytes > 0 ? bytes : 0);
  std::lock_guard<std::mutex> lock(g_origin_mu);
  g_origin = bytes > 0 ? origin : "";
}

int64_t Limit() { return g_limit.load(); }

Status Check(const std::string& what, int64_t bytes) {
  const int64_t limit = Limit();
  if (limit <= 0 || bytes <= limit) return Status::Ok();
  return Status::OutOfRange(what + " needs " + FormatBytes(bytes) + ", more than the memory limit " +
                            FormatBytes(limit) + OriginSuffix());
}

std::string OutOfMemoryMessage(const std::string& context) {
  std::string m = "out of memory";
  if (!context.empty()) m += ": " + context;
  const int64_t limit = Limit();
  if (limit > 0) {
    m += " under the memory limit " + FormatBytes(limit) + OriginSuffix();
  }
  return m;
}

bool UnderAddressSanitizer() {
#if defined(SY_BUDGET_ASAN)
  return true;
#else
  return false;
#endif
}

Result<int64_t> LimitAddressSpace(int64_t bytes) {
  if (bytes <= 0 || UnderAddressSanitizer()) return int64_t{0};
  const int64_t limit = MappedAddressSpace() + bytes + kAddressSpaceHeadroom;
  struct rlimit lim {};
  if (getrlimit(RLIMIT_AS, &lim) != 0) {
    return Status::Internal(std::string("getrlimit(RLIMIT_AS): ") + std::strerror(errno));
  }
  // Only the soft limit: lower than an existing one is never raised, and children (tuner
  // candidates) may still set their own.
  if (lim.rlim_cur != RLIM_INFINITY && static_cast<int64_t>(lim.rlim_cur) <= limit) {
    return static_cast<int64_t>(lim.rlim_cur);
  }
  lim.rlim_cur = static_cast<rlim_t>(limit);
  if (lim.rlim_max != RLIM_INFINITY && lim.rlim_cur > lim.rlim_max) lim.rlim_cur = lim.rlim_max;
  if (setrlimit(RLIMIT_AS, &lim) != 0) {
    return Status::Internal(std::string("setrlimit(RLIMIT_AS): ") + std::strerror(errno));
  }
  return static_cast<int64_t>(lim.rlim_cur);
}

}  // namespace switchyard::memory_budget
