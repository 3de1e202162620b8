// Activation functions of Switchyard's fused ops (FusedConv, FusedMatMul and the unary
// steps of FusedElementwise), in fp64. One table so that the reference kernels and the
// passes agree on names and parameter counts. Pure functions, thread-safe.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "switchyard/status.h"

namespace switchyard::ops {

enum class Act {
  kNone, kRelu, kLeakyRelu, kClip, kSigmoid, kHardSigmoid, kHardSwish, kTanh, kSiLU, kGelu,
  kGeluTanh,  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): Gelu(approximate="tanh")
  // Unary steps that only FusedElementwise uses.
  kErf, kExp, kLog, kSqrt, kNeg, kAbs, kReciprocal,
};

// "" -> kNone; unknown names -> error naming the node.
Result<Act> ParseActivation(const Node& node, const std::string& name);
// Parameters an activation reads: LeakyRelu {alpha}; Clip {min, max};
// HardSigmoid {alpha, beta}; others none.
int ActivationParamCount(Act a);

// Applies `a` with its parameters (`p` points at ActivationParamCount(a) floats).
inline double Activate(Act a, double x, const float* p) {
  switch (a) {
    case Act::kNone: return x;
    case Act::kRelu: return x > 0 ? x : 0.0;
    case Act::kLeakyRelu: return x >= 0 ? x : x * static_cast<double>(p[0]);
    case Act::kClip: return std::fmin(std::fmax(x, static_cast<double>(p[0])), static_cast<double>(p[1]));
    case Act::kSigmoid: return 1.0 / (1.0 + std::exp(-x));
    case Act::kHardSigmoid:
      return std::fmax(0.0, std::fmin(1.0, static_cast<double>(p[0]) * x + static_cast<double>(p[1])));
    case Act::kHardSwish: return x * std::fmax(0.0, std::fmin(1.0, x / 6.0 + 0.5));
    case Act::kTanh: return std::tanh(x);
    case Act::kSiLU: return x / (1.0 + std::exp(-x));
    case Act::kGelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Act::kGeluTanh: return 0.5 * x * (1.0 + std::tanh(0.79788456080286536 * (x + 0.044715 * x * x * x)));
    case Act::kErf: return std::erf(x);
    case Act::kExp: return std::exp(x);
    case Act::kLog: return std::log(x);
    case Act::kSqrt: return std::sqrt(x);
    case Act::kNeg: return -x;
    case Act::kAbs: return std::fabs(x);
    case Act::kReciprocal: return 1.0 / x;
  }
  return x;
}

// Reads a node's `activation` / `activation_params` attributes and checks the count.
// `post_affine` [scale, shift] (FusedConv only, fuse.conv_act on CPU targets): the
// activation's result times scale plus shift, as a constant Mul and Add after it computed.
struct ActivationSpec {
  Act act = Act::kNone;
  std::vector<float> params;
  bool has_post = false;
  float post_scale = 1.f, post_shift = 0.f;
};
Result<ActivationSpec> ReadActivation(const Node& node);

}  // namespace switchyard::ops
