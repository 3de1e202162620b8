#include "backends/cpu/op_impl.h"

#include <algorithm>

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

void CpuImplRegistry::SetAvailability(const CpuOpImpl& impl, std::function<bool()> available) {
  availability_[Key{impl.provider, impl.domain, impl.op_type, impl.variant}] = std::move(available);
}

bool CpuImplRegistry::Available(const CpuOpImpl& impl) const {
  auto it = availability_.find(Key{impl.provider, impl.domain, impl.op_type, impl.variant});
  return it == availability_.end() || !it->second || it->second();
}

bool ResidualHasOutputShape(const KernelBuildContext& ctx) {
  if (ctx.input_shapes.size() < 4) return true;
  const auto& x = ctx.input_shapes[0];
  const auto& w = ctx.input_shapes[1];
  const auto& z = ctx.input_shapes[3];
  return z.size() == x.size() && !w.empty() && z[0] == x[0] && z[1] == w[0];
}

bool InputScaleFits(const KernelBuildContext& ctx) {
  if (ctx.input_shapes.size() < 5 || ctx.input_dtypes.size() < 5) return false;
  // float32, or bf16 with a bf16 X (precision=bf16 stores both in bf16)
  const DataType t = ctx.input_dtypes[4];
  if (t != DataType::kFloat && (t != DataType::kBfloat16 || ctx.input_dtypes[0] != t)) return false;
  const auto& x = ctx.input_shapes[0];
  const auto& s = ctx.input_shapes[4];
  return x.size() == 4 && s.size() == 4 && (s[0] == 1 || s[0] == x[0]) && s[1] == x[1] && s[2] == 1 && s[3] == 1;
}

void LimitThreadsToWork(int64_t work, int64_t per_thread, const KernelBuildContext& ctx, StepSpec& spec) {
  if (work <= 0 || per_thread <= 0 || ctx.threads < 2) return;
  // One thread or the route's: a step on one thread opens no parallel region, but a team of
  // another size between two full ones makes libgomp end and recreate its pool's threads
  // (the 16-core host with counts of work / per_thread: MobileNetV2 b1 13.4 ms against 2.8).
  if (work < 2 * per_thread) spec.params["threads"] = 1;
}

bool BiasHasNElements(const Node& node, const KernelBuildContext& ctx, size_t index) {
  if (index >= ctx.input_shapes.size() || ctx.input_shapes[1].size() < 2) return true;
  const auto& b = ctx.input_shapes[1];
  const int64_t n = node.GetInt("trans_b", 0) ? b[b.size() - 2] : b.back();
  int64_t numel = 1;
  for (int64_t d : ctx.input_shapes[index]) numel *= d;
  return n < 0 || numel == n;
}

}  // namespace switchyard
