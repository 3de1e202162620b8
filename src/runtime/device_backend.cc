#include "runtime/device_backend.h"

#include <map>

namespace switchyard {
namespace {
std::map<std::string, DeviceBackend>& Backends() {
  static auto* b = new std::map<std::string, DeviceBackend>();  // static-init safe
  return *b;
}
}  // namespace

void RegisterDeviceBackend(const std::string& target, DeviceBackend backend) {
  Backends()[target] = std::move(backend);
}

const DeviceBackend* FindDeviceBackend(const std::string& target) {
  auto it = Backends().find(target);
  return it == Backends().end() ? nullptr : &it->second;
}

}  // namespace switchyard
