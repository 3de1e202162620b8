// The pass table (pipeline order) and RunPasses: each enabled pass, then type/shape
// inference and the IR verifier, with errors prefixed by the pass name.
#include "ir/shape_inference.h"
#include "ir/verifier.h"
#include "passes/pass.h"

namespace switchyard {
namespace passes {
Status RunConstantFolding(Graph& graph, PassContext& ctx);
Status RunDeadCode(Graph& graph, PassContext& ctx);
Status RunFuseConvBn(Graph& graph, PassContext& ctx);
Status RunFuseGelu(Graph& graph, PassContext& ctx);
Status RunFuseLayerNorm(Graph& graph, PassContext& ctx);
Status RunFuseAttention(Graph& graph, PassContext& ctx);
Status RunFuseGemmEpilogue(Graph& graph, PassContext& ctx);
Status RunFuseConvAct(Graph& graph, PassContext& ctx);
Status RunFoldConvInput(Graph& graph, PassContext& ctx);
Status RunFuseConvScale(Graph& graph, PassContext& ctx);
Status RunFuseConvPool(Graph& graph, PassContext& ctx);
Status RunFuseElementwise(Graph& graph, PassContext& ctx);
Status RunFuseSlice(Graph& graph, PassContext& ctx);
Status RunSimplifyLayout(Graph& graph, PassContext& ctx);
Status RunFoldPad(Graph& graph, PassContext& ctx);
Status RunPruneRows(Graph& graph, PassContext& ctx);
}  // namespace passes

const std::vector<Pass>& PassPipeline() {
  // Order matters: BatchNorm folds into plain Conv before activations fuse; GELU and
  // LayerNorm are recognised before the GEMM epilogue so that "MatMul + bias + Gelu"
  // becomes one FusedMatMul; generic elementwise chains take what the specific fusions
  // left (fuse_conv_scale first: a squeeze-excite Mul stays for the conv, not an elementwise
  // chain); the final folding + dead-code sweep removes what the fusions orphaned.
  // simplify_layout turns layout-only Transposes into Reshapes and moves the rest next to
  // the ops that absorb them (fuse_attention's layout perms); fold_pad gives a Conv the
  // zero Pad in front of it (tf2onnx) before the conv fusions look for the Conv.
  // prune_rows moves row Gathers up through the unfused ops, before fusions hide them,
  // and again after fuse_slice has given packed q/k/v's parts their own GEMMs.
  // fold_conv_input (fuse.conv_bn's constant scale in front of a conv) waits for
  // fuse_conv_act, which may need that Mul or Div as the end of a HardSwish.
  static const std::vector<Pass> kPasses = {
      {"constant_folding", nullptr, passes::RunConstantFolding},
      {"dead_code", nullptr, passes::RunDeadCode},
      {"simplify_layout", nullptr, passes::RunSimplifyLayout},
      {"fold_pad", nullptr, passes::RunFoldPad},
      {"prune_rows", "prune.rows", passes::RunPruneRows},
      {"fuse_conv_bn", "fuse.conv_bn", passes::RunFuseConvBn},
      {"fuse_gelu", "fuse.gelu", passes::RunFuseGelu},
      {"fuse_layernorm", "fuse.layernorm", passes::RunFuseLayerNorm},
      {"fuse_attention", "fuse.attention", passes::RunFuseAttention},
      {"fuse_gemm_epilogue", "fuse.gemm_epilogue", passes::RunFuseGemmEpilogue},
      {"fuse_conv_act", "fuse.conv_act", passes::RunFuseConvAct},
      {"fold_conv_input", "fuse.conv_bn", passes::RunFoldConvInput},
      {"fuse_conv_scale", "fuse.conv_scale", passes::RunFuseConvScale},
      {"fuse_conv_pool", "fuse.conv_pool", passes::RunFuseConvPool},
      {"fuse_elementwise", "fuse.elementwise", passes::RunFuseElementwise},
      {"fuse_slice", "fuse.slice", passes::RunFuseSlice},
      {"prune_rows", "prune.rows", passes::RunPruneRows},
      {"constant_folding", nullptr, passes::RunConstantFolding},
      {"dead_code", nullptr, passes::RunDeadCode},
  };
  return kPasses;
}

Status RunPasses(Graph& graph, PassContext& ctx) {
  for (const Pass& pass : PassPipeline()) {
    if (pass.knob && !(ctx.enabled && ctx.enabled(pass.knob))) continue;
    const std::string where = std::string("pass ") + pass.name;
    SY_RETURN_IF_ERROR(pass.run(graph, ctx).WithContext(where));
    graph.RebuildProducers();
    SY_RETURN_IF_ERROR(InferShapes(graph).WithContext(where + ": shape inference"));
    SY_RETURN_IF_ERROR(VerifyGraph(graph).WithContext(where + ": verifier"));
  }
  return Status::Ok();
}

}  // namespace switchyard
