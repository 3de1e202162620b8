#include "backends/cpu/op_impl.h"

namespace switchyard {

CpuImplRegistry& CpuImplRegistry::Global() {
  static CpuImplRegistry* r = new CpuImplRegistry();  // never destroyed: static registrars
  return *r;
}

void CpuImplRegistry::Register(CpuOpImpl impl) { impls_.push_back(std::move(impl)); }

const CpuOpImpl* CpuImplRegistry::Find(const std::string& provider, const std::string& domain,
                                       const std::string& op_type,
                                       const std::string& variant) const {
  for (const CpuOpImpl& i : impls_) {
    if (i.provider == provider && i.domain == domain && i.op_type == op_type &&
        i.variant == variant) {
      return &i;
    }
  }
  return nullptr;
}

std::vector<const CpuOpImpl*> CpuImplRegistry::ForOp(const std::string& domain,
                                                     const std::string& op_type) const {
  std::vector<const CpuOpImpl*> out;
  for (const CpuOpImpl& i : impls_) {
    if (i.domain == domain && i.op_type == op_type) out.push_back(&i);
  }
  return out;
}

}  // namespace switchyard
