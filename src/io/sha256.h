// SHA-256 digests (OpenSSL libcrypto) as lower-case hex: model, data and engine hashes.
#pragma once

#include <string>

#include "switchyard/status.h"

namespace switchyard {

std::string Sha256Hex(const void* data, size_t size);
// The 32 raw digest bytes.
std::string Sha256Raw(const void* data, size_t size);
inline std::string Sha256Hex(const std::string& s) { return Sha256Hex(s.data(), s.size()); }
Result<std::string> Sha256File(const std::string& path);

}  // namespace switchyard
