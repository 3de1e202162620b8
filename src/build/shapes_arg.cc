// --shapes NAME=1x3x224x224 | NAME=1x3x[32..640]x[32..224..640]
#include <cstdlib>

#include "build/builder.h"

namespace switchyard {
namespace {

bool ParseInt(const std::string& s, int64_t* v) {
  if (s.empty() || s.size() > 15) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  *v = std::strtoll(s.c_str(), nullptr, 10);
  return true;
}

}  // namespace

Status ParseShapeArg(const std::string& arg, std::map<std::string, std::vector<DimRange>>* out) {
  const size_t eq = arg.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size()) {
    return Status::Invalid("--shapes '" + arg + "': expected NAME=DxDxD, e.g. x=1x3x224x224");
  }
  const std::string name = arg.substr(0, eq), dims = arg.substr(eq + 1);
  std::vector<DimRange> ranges;
  size_t pos = 0;
  while (pos <= dims.size()) {
    size_t end;
    std::string tok;
    if (pos < dims.size() && dims[pos] == '[') {
      end = dims.find(']', pos);
      if (end == std::string::npos) return Status::Invalid("--shapes '" + arg + "': unclosed '['");
      tok = dims.substr(pos + 1, end - pos - 1);
      ++end;
    } else {
      end = dims.find('x', pos);
      if (end == std::string::npos) end = dims.size();
      tok = dims.substr(pos, end - pos);
    }
    DimRange r;
    const size_t dots = tok.find("..");
    if (dots == std::string::npos) {
      if (!ParseInt(tok, &r.min)) {
        return Status::Invalid("--shapes '" + arg + "': '" + tok + "' is not a size");
      }
      r.opt = r.max = r.min;
    } else {
      const std::string lo = tok.substr(0, dots), rest = tok.substr(dots + 2);
      const size_t dots2 = rest.find("..");
      const std::string mid = dots2 == std::string::npos ? "" : rest.substr(0, dots2);
      const std::string hi = dots2 == std::string::npos ? rest : rest.substr(dots2 + 2);
      if (!ParseInt(lo, &r.min) || !ParseInt(hi, &r.max) || (!mid.empty() && !ParseInt(mid, &r.opt))) {
        return Status::Invalid("--shapes '" + arg + "': '[" + tok + "]' is not a range MIN..MAX or MIN..OPT..MAX");
      }
      if (mid.empty()) r.opt = r.max;
      if (r.min > r.opt || r.opt > r.max) {
        return Status::Invalid("--shapes '" + arg + "': range [" + tok + "] must have min <= opt <= max");
      }
    }
    ranges.push_back(r);
    if (end >= dims.size()) break;
    if (dims[end] != 'x') return Status::Invalid("--shapes '" + arg + "': expected 'x' between sizes");
    pos = end + 1;
  }
  if (out->count(name)) return Status::Invalid("--shapes: '" + name + "' is given twice");
  (*out)[name] = std::move(ranges);
  return Status::Ok();
}

}  // namespace switchyard
