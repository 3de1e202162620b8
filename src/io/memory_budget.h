// The process memory budget (`switchyard --max-memory SIZE`). One value per process, set
// once at start-up (0: no limit, the default). Code that is about to allocate something
// whose size a file declares (the importer's initializers, an engine's arena and
// constants) calls Check() first and refuses with an error naming the thing, its size and
// the limit, so nothing is allocated. LimitAddressSpace() sets RLIMIT_AS as a backstop for
// the allocations no check covers; the CLI turns the std::bad_alloc that then follows into
// "error: out of memory".
#pragma once

#include <cstdint>
#include <string>

#include "switchyard/status.h"

namespace switchyard::memory_budget {

// "4096", "512K", "512M", "4G", "1.5G", "2T", with an optional "B"/"iB" suffix ("512MiB",
// "4GB") and any case; units are powers of 1024. Errors name the text and the forms.
Result<int64_t> ParseSize(const std::string& text);
// "1.50 GiB (1610612736 bytes)"; plain "N bytes" below 1 KiB.
std::string FormatBytes(int64_t bytes);

// Sets the budget; `origin` says where it came from in messages ("--max-memory 512M").
// bytes <= 0 removes it.
void SetLimit(int64_t bytes, const std::string& origin = "");
int64_t Limit();  // 0: none

// Ok when there is no limit or `bytes` fits in it; otherwise OutOfRange:
// "<what> needs X, more than the memory limit Y (--max-memory 512M)".
Status Check(const std::string& what, int64_t bytes);
// The error for an allocation that failed (std::bad_alloc) under the current limit:
// "out of memory<: context> (--max-memory 512M)" or "out of memory<: context>".
std::string OutOfMemoryMessage(const std::string& context = "");

// True when this binary was built with AddressSanitizer (whose shadow memory reserves
// terabytes of address space, so RLIMIT_AS cannot be used).
bool UnderAddressSanitizer();
// Sets RLIMIT_AS (soft and hard) to the address space mapped now + `bytes` + headroom
// for thread stacks and allocator arenas (address space, not memory: 64 threads reserve
// 512 MiB of stacks alone). Returns the limit set, 0 when skipped (ASan, bytes <= 0).
Result<int64_t> LimitAddressSpace(int64_t bytes);
// Address-space headroom LimitAddressSpace() adds.
constexpr int64_t kAddressSpaceHeadroom = int64_t{3} << 30;

}  // namespace switchyard::memory_budget
