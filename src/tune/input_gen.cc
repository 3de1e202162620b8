#include "tune/input_gen.h"

#include <charconv>
#include <cmath>
#include <random>

#include "tune/eval_data.h"

namespace switchyard {

namespace {

Status CheckDecl(const InputDecl& d) {
  const std::string what = "input '" + d.name + "'";
  if (d.dtype == DataType::kString || d.dtype == DataType::kUndefined) {
    return Status::Unsupported(what + ": cannot generate " + DataTypeName(d.dtype) + " data");
  }
  switch (d.distribution) {
    case Distribution::kUniform:
      if (!std::isfinite(d.low) || !std::isfinite(d.high) || d.low > d.high) {
        return Status::Invalid(what + ": uniform(" + std::to_string(d.low) + "," +
                               std::to_string(d.high) + ") needs finite low <= high");
      }
      break;
    case Distribution::kNormal:
      if (!std::isfinite(d.mean) || !std::isfinite(d.stddev) || d.stddev < 0) {
        return Status::Invalid(what + ": normal(" + std::to_string(d.mean) + "," +
                               std::to_string(d.stddev) + ") needs a finite mean and std >= 0");
      }
      break;
    case Distribution::kConstant:
      if (!std::isfinite(d.value)) return Status::Invalid(what + ": constant value is not finite");
      break;
  }
  return Status::Ok();
}

// Normal and constant values: floats as drawn, integers and bool rounded to nearest
// (SetDouble then saturates integers at the dtype's range; bool is "non-zero").
void SetRounded(Tensor* t, int64_t i, double v) {
  t->SetDouble(i, IsFloatType(t->dtype()) ? v : std::round(v));
}

}  // namespace

Result<TensorMap> GenerateInputs(const std::vector<InputDecl>& decls, uint64_t seed) {
  TensorMap out;
  std::mt19937_64 rng(seed);
  for (const InputDecl& d : decls) {
    auto n = CheckedNumElements(d.shape, int64_t{1} << 32);
    if (!n.ok()) return n.status().WithContext("input '" + d.name + "'");
    SY_RETURN_IF_ERROR(CheckDecl(d));
    Tensor t(d.dtype, d.shape);
    if (d.distribution == Distribution::kUniform) {
      // Unchanged since the first version: `bench` results and tests depend on these bits.
      std::uniform_real_distribution<double> u(d.low, d.high);
      for (int64_t i = 0; i < *n; ++i) {
        const double v = u(rng);
        if (IsFloatType(d.dtype))
          t.SetDouble(i, v);
        else if (d.dtype == DataType::kBool)
          t.SetInt64(i, v >= (d.low + d.high) / 2 ? 1 : 0);
        else
          t.SetInt64(i, static_cast<int64_t>(std::floor(v)));
      }
    } else if (d.distribution == Distribution::kNormal) {
      std::normal_distribution<double> g(d.mean, d.stddev);
      for (int64_t i = 0; i < *n; ++i) SetRounded(&t, i, g(rng));
    } else {
      for (int64_t i = 0; i < *n; ++i) SetRounded(&t, i, d.value);
    }
    out[d.name] = std::move(t);
  }
  return out;
}

// --- --input-spec: NAME:DTYPE[D0,D1,...]~DIST(ARGS) -------------------------------------

namespace {

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

bool ParseNumber(const std::string& text, double* out) {
  const std::string s = Trim(text);
  if (s.empty()) return false;
  const char* b = s.data() + (s[0] == '+' ? 1 : 0);
  const char* e = s.data() + s.size();
  auto r = std::from_chars(b, e, *out);
  return r.ec == std::errc() && r.ptr == e && std::isfinite(*out);
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

std::string FormatNumber(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);  // shortest text that reads back exactly
  return std::string(buf, r.ptr);
}

Status ParseDistribution(const std::string& dist, const std::string& where, InputDecl* d) {
  const size_t open = dist.find('(');
  if (open == std::string::npos || dist.back() != ')') {
    return Status::Invalid(where + ": distribution '" + dist +
                           "' must look like uniform(lo,hi), normal(mean,std) or constant(v)");
  }
  const std::string kind = Trim(dist.substr(0, open));
  const std::vector<std::string> args = Split(dist.substr(open + 1, dist.size() - open - 2), ',');
  std::vector<double> v(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (!ParseNumber(args[i], &v[i])) {
      return Status::Invalid(where + ": '" + Trim(args[i]) + "' in '" + dist +
                             "' is not a finite number");
    }
  }
  auto arity = [&](size_t want, const char* form) -> Status {
    if (v.size() == want) return Status::Ok();
    return Status::Invalid(where + ": '" + dist + "' needs " + std::to_string(want) +
                           " argument(s): " + form);
  };
  if (kind == "uniform") {
    SY_RETURN_IF_ERROR(arity(2, "uniform(lo,hi)"));
    if (!(v[0] < v[1])) {
      return Status::Invalid(where + ": '" + dist +
                             "' needs lo < hi (use constant(v) for one value)");
    }
    d->distribution = Distribution::kUniform;
    d->low = v[0];
    d->high = v[1];
  } else if (kind == "normal") {
    SY_RETURN_IF_ERROR(arity(2, "normal(mean,std)"));
    if (v[1] < 0) return Status::Invalid(where + ": '" + dist + "' needs std >= 0");
    d->distribution = Distribution::kNormal;
    d->mean = v[0];
    d->stddev = v[1];
  } else if (kind == "constant") {
    SY_RETURN_IF_ERROR(arity(1, "constant(v)"));
    d->distribution = Distribution::kConstant;
    d->value = v[0];
  } else {
    return Status::Invalid(where + ": unknown distribution '" + kind +
                           "' (known: uniform, normal, constant)");
  }
  return Status::Ok();
}

}  // namespace

Result<InputDecl> ParseInputSpec(const std::string& spec) {
  const std::string where = "--input-spec '" + spec + "'";
  const std::string form = " (expected NAME:DTYPE[D0,D1,...] with an optional ~DIST(ARGS))";
  InputDecl d;
  // Parsed from the right so that names may hold ':', '[' or '~' (e.g. TF's "input:0").
  std::string rest = spec;
  std::string dist;
  bool has_dist = false;
  const size_t tilde = rest.rfind('~');
  const size_t close = rest.rfind(']');
  if (tilde != std::string::npos && (close == std::string::npos || tilde > close)) {
    dist = Trim(rest.substr(tilde + 1));
    rest = rest.substr(0, tilde);
    has_dist = true;
  }
  rest = Trim(rest);
  if (rest.empty() || rest.back() != ']') {
    return Status::Invalid(where + ": no shape '[...]' after the dtype" + form);
  }
  const size_t open = rest.rfind('[');
  if (open == std::string::npos) return Status::Invalid(where + ": shape lacks '['" + form);
  const std::string dims = rest.substr(open + 1, rest.size() - open - 2);
  const std::string head = rest.substr(0, open);
  const size_t colon = head.rfind(':');
  if (colon == std::string::npos) {
    return Status::Invalid(where + ": no ':' between the input name and the dtype" + form);
  }
  d.name = head.substr(0, colon);
  const std::string dtype = Trim(head.substr(colon + 1));
  if (d.name.empty()) return Status::Invalid(where + ": the input name is empty" + form);
  d.dtype = DataTypeFromName(dtype);
  if (d.dtype == DataType::kUndefined || d.dtype == DataType::kString) {
    return Status::Invalid(where + ": unknown or ungeneratable dtype '" + dtype +
                           "' (use float32, float16, bfloat16, float64, int64, int32, int16, "
                           "int8, uint8, ..., bool)");
  }
  if (!Trim(dims).empty()) {
    for (const std::string& part : Split(dims, ',')) {
      const std::string p = Trim(part);
      int64_t v = -1;
      auto r = std::from_chars(p.data(), p.data() + p.size(), v);
      if (p.empty() || r.ec != std::errc() || r.ptr != p.data() + p.size() || v < 0) {
        return Status::Invalid(where + ": dimension '" + p + "' in [" + dims +
                               "] is not a non-negative integer");
      }
      d.shape.push_back(v);
    }
  }
  auto n = CheckedNumElements(d.shape, int64_t{1} << 32);
  if (!n.ok()) return n.status().WithContext(where);
  if (!IsFloatType(d.dtype)) d.high = 2;  // default for integers and bool: {0, 1}
  if (has_dist) {
    if (dist.empty()) return Status::Invalid(where + ": nothing after '~'" + form);
    SY_RETURN_IF_ERROR(ParseDistribution(dist, where, &d));
  }
  return d;
}

std::string FormatInputSpec(const InputDecl& d) {
  std::string s = d.name + ":" + DataTypeName(d.dtype) + "[";
  for (size_t i = 0; i < d.shape.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(d.shape[i]);
  }
  s += "]~";
  switch (d.distribution) {
    case Distribution::kUniform:
      s += "uniform(" + FormatNumber(d.low) + "," + FormatNumber(d.high) + ")";
      break;
    case Distribution::kNormal:
      s += "normal(" + FormatNumber(d.mean) + "," + FormatNumber(d.stddev) + ")";
      break;
    case Distribution::kConstant:
      s += "constant(" + FormatNumber(d.value) + ")";
      break;
  }
  return s;
}

}  // namespace switchyard
