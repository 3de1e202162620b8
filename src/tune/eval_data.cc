#include "tune/eval_data.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "io/npy.h"
#include "onnx/tensor_proto.h"

namespace switchyard {

namespace fs = std::filesystem;

namespace {

// "set2" < "set10": runs of digits compare by value, everything else bytewise; names
// that tie (e.g. "set01" and "set1") fall back to plain order so the order is total.
bool NaturalLess(const std::string& a, const std::string& b) {
  auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      size_t iz = i, jz = j;
      while (iz + 1 < ie && a[iz] == '0') ++iz;
      while (jz + 1 < je && b[jz] == '0') ++jz;
      if (ie - iz != je - jz) return ie - iz < je - jz;
      const int c = a.compare(iz, ie - iz, b, jz, je - jz);
      if (c != 0) return c < 0;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
      ++i;
      ++j;
    }
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  return a < b;
}

std::string Join(const std::vector<std::string>& v) {
  if (v.empty()) return "(none)";
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

struct Entry {
  std::string name;
  std::string path;
  bool is_dir = false;
};

// Lists `folder` (one level) in natural order. Skips names starting with '.' and *.onnx
// files (an ONNX test case keeps model.onnx beside test_data_set_N). A symlink must
// resolve inside `root` (canonical), as external data must stay in the model's folder.
Result<std::vector<Entry>> ListFolder(const std::string& folder, const std::string& root) {
  std::vector<Entry> out;
  std::error_code ec;
  fs::directory_iterator it(folder, ec), end;
  if (ec) return Status::IoError("cannot list folder '" + folder + "': " + ec.message());
  for (; it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::string path = (fs::path(folder) / name).string();
    if (name.empty() || name[0] == '.') continue;
    std::error_code entry_ec;
    if (fs::is_symlink(fs::symlink_status(path, entry_ec))) {
      const fs::path target = fs::canonical(path, entry_ec);
      if (entry_ec) return Status::NotFound("'" + path + "' is a symlink to nothing");
      const std::string t = target.string();
      if (t.size() <= root.size() || t.compare(0, root.size(), root) != 0 ||
          (t[root.size()] != '/' && root != "/")) {
        return Status::Invalid("'" + path + "' is a symlink to '" + t +
                               "', outside the data folder '" + root +
                               "'; symlinks must stay inside it");
      }
    }
    const fs::file_status st = fs::status(path, entry_ec);
    if (fs::is_directory(st)) {
      out.push_back({name, path, true});
    } else if (fs::is_regular_file(st)) {
      if (fs::path(name).extension() == ".onnx") continue;
      out.push_back({name, path, false});
    } else {
      return Status::Invalid("'" + path + "' is neither a regular file nor a folder");
    }
  }
  if (ec) return Status::IoError("cannot list folder '" + folder + "': " + ec.message());
  std::sort(out.begin(), out.end(),
            [](const Entry& x, const Entry& y) { return NaturalLess(x.name, y.name); });
  return out;
}

Status CheckFolder(const std::string& dir, const char* what, std::string* root) {
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (!fs::exists(st)) return Status::NotFound(std::string(what) + " '" + dir + "' does not exist");
  if (!fs::is_directory(st)) {
    return Status::Invalid(std::string(what) + " '" + dir + "' is not a folder");
  }
  *root = fs::canonical(dir, ec).string();
  if (ec) return Status::IoError("cannot resolve " + std::string(what) + " '" + dir + "'");
  return Status::Ok();
}

// "input_3" -> 3 when `stem` is `prefix` followed by decimal digits only.
bool IndexedName(const std::string& stem, const std::string& prefix, size_t* k) {
  if (stem.size() <= prefix.size() || stem.compare(0, prefix.size(), prefix) != 0) return false;
  const std::string digits = stem.substr(prefix.size());
  if (digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0;
      })) {
    return false;
  }
  *k = static_cast<size_t>(std::stoul(digits));
  return true;
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

struct FileTensor {
  std::string path;
  Tensor tensor;
};
using Named = std::map<std::string, FileTensor>;

// The tensor files of one set folder. `reference_only`: a --reference folder, whose files
// are named after outputs; otherwise a data folder, whose files are named after inputs
// (plus output_K.pb references of the ONNX layout).
struct SetFiles {
  Named inputs, outputs;
};

Result<SetFiles> ReadSetFolder(const std::string& folder, const std::string& set_name,
                               const std::vector<Entry>& entries,
                               const std::vector<std::string>& input_names,
                               const std::vector<std::string>& output_names, bool reference_only) {
  SetFiles out;
  const std::string where = "set '" + set_name + "' ('" + folder + "')";
  for (const Entry& e : entries) {
    if (e.is_dir) {
      return Status::Invalid(where + ": '" + e.path +
                             "' is a folder; a set folder holds tensor files only");
    }
    const std::string ext = fs::path(e.name).extension().string();
    const std::string stem = fs::path(e.name).stem().string();
    if (ext != ".npy" && ext != ".pb") {
      return Status::Invalid(
          "'" + e.path + "' is not a tensor file (.npy or ONNX TensorProto .pb)" +
          (ext == ".npz" ? "; unpack .npz archives into one .npy per input" : ""));
    }
    // By file name first; ONNX's input_K.pb / output_K.pb by stored name, then by index.
    bool is_output = reference_only;
    std::string target;
    Tensor t;
    size_t k = 0;
    const std::vector<std::string>& own = reference_only ? output_names : input_names;
    const bool input_k = !reference_only && ext == ".pb" && IndexedName(stem, "input_", &k);
    const bool output_k = !input_k && ext == ".pb" && IndexedName(stem, "output_", &k);
    if (Contains(own, stem)) {
      target = stem;
      SY_ASSIGN_OR_RETURN(t, ReadTensorFile(e.path));
    } else if (input_k || output_k) {
      is_output = output_k;
      const std::vector<std::string>& names = is_output ? output_names : input_names;
      std::string stored;
      SY_ASSIGN_OR_RETURN(t, ReadTensorProtoFile(e.path, &stored));
      if (Contains(names, stored)) {
        target = stored;
      } else if (k < names.size()) {
        target = names[k];
      } else {
        return Status::NotFound("'" + e.path + "': the model has only " +
                                std::to_string(names.size()) +
                                (is_output ? " output(s): " : " input(s): ") + Join(names));
      }
    } else if (reference_only) {
      return Status::NotFound("'" + e.path + "' is named after no model output; the outputs are: " +
                              Join(output_names));
    } else {
      return Status::NotFound(
          "'" + e.path + "' is named after no model input; the inputs are: " + Join(input_names) +
          (Contains(output_names, stem) ? " ('" + stem +
                                              "' is an output: pass reference outputs "
                                              "as a reference folder, or as output_K.pb)"
                                        : ""));
    }
    Named& into = is_output ? out.outputs : out.inputs;
    auto [it, fresh] = into.try_emplace(target);
    if (!fresh) {
      return Status::Invalid(where + ": both '" + it->second.path + "' and '" + e.path + "' hold " +
                             (is_output ? "output '" : "input '") + target + "'");
    }
    it->second = {e.path, std::move(t)};
  }
  if (!reference_only) {
    for (size_t i = 0; i < input_names.size(); ++i) {
      if (!out.inputs.count(input_names[i])) {
        return Status::NotFound(where + " has no file for input '" + input_names[i] + "' (" +
                                input_names[i] + ".npy, " + input_names[i] + ".pb or input_" +
                                std::to_string(i) + ".pb)");
      }
    }
  }
  // References come complete or not at all: a partial set would gate only some outputs.
  if (reference_only || !out.outputs.empty()) {
    for (size_t i = 0; i < output_names.size(); ++i) {
      if (!out.outputs.count(output_names[i])) {
        return Status::NotFound(where + " has no reference for output '" + output_names[i] + "' (" +
                                (reference_only
                                     ? output_names[i] + ".npy, " + output_names[i] + ".pb or "
                                     : std::string()) +
                                "output_" + std::to_string(i) + ".pb)");
      }
    }
  }
  return out;
}

// Splits a listing into subfolders and loose files, refusing a mix and an empty folder.
Status SplitListing(const std::string& dir, const std::vector<Entry>& entries,
                    std::vector<Entry>* dirs, std::vector<Entry>* files) {
  if (entries.empty()) {
    return Status::Invalid("folder '" + dir +
                           "' is empty (expected tensor files or one "
                           "subfolder per set)");
  }
  for (const Entry& e : entries) (e.is_dir ? dirs : files)->push_back(e);
  if (!dirs->empty() && !files->empty()) {
    return Status::Invalid("folder '" + dir + "' mixes subfolders ('" + dirs->front().name +
                           "') with loose files ('" + files->front().name +
                           "'); use either one set of files or one subfolder per set");
  }
  if (dirs->size() > kMaxEvalSets) {
    return Status::OutOfRange("folder '" + dir + "' holds " + std::to_string(dirs->size()) +
                              " sets; at most " + std::to_string(kMaxEvalSets) + " are read");
  }
  return Status::Ok();
}

void AppendFiles(const Named& m, const std::vector<std::string>& order, EvalSet* s) {
  for (const std::string& n : order) {
    auto it = m.find(n);
    if (it != m.end()) s->files.push_back(it->second.path);
  }
}

TensorMap Tensors(Named&& m) {
  TensorMap out;
  for (auto& [k, v] : m) out[k] = std::move(v.tensor);
  return out;
}

}  // namespace

Result<std::vector<EvalSet>> LoadEvalData(const std::string& dir,
                                          const std::vector<std::string>& input_names,
                                          const std::vector<std::string>& output_names) {
  std::string root;
  SY_RETURN_IF_ERROR(CheckFolder(dir, "data folder", &root));
  SY_ASSIGN_OR_RETURN(std::vector<Entry> entries, ListFolder(dir, root));
  std::vector<Entry> dirs, files;
  SY_RETURN_IF_ERROR(SplitListing(dir, entries, &dirs, &files));
  std::vector<std::pair<std::string, std::string>> folders;  // (set name, folder)
  if (dirs.empty()) folders.emplace_back("data", dir);
  for (const Entry& d : dirs) folders.emplace_back(d.name, d.path);

  std::vector<EvalSet> sets;
  for (const auto& [name, folder] : folders) {
    std::vector<Entry> listing = files;
    if (!dirs.empty()) {
      SY_ASSIGN_OR_RETURN(listing, ListFolder(folder, root));
      if (listing.empty()) return Status::Invalid("set folder '" + folder + "' is empty");
    }
    SY_ASSIGN_OR_RETURN(SetFiles f,
                        ReadSetFolder(folder, name, listing, input_names, output_names, false));
    EvalSet s;
    s.name = name;
    AppendFiles(f.inputs, input_names, &s);
    AppendFiles(f.outputs, output_names, &s);
    s.inputs = Tensors(std::move(f.inputs));
    s.reference = Tensors(std::move(f.outputs));
    if (!s.reference.empty()) s.reference_source = "onnx-test-data";
    sets.push_back(std::move(s));
  }
  // One gate for all sets: either every set brought its reference or none did.
  for (const EvalSet& s : sets) {
    if (s.reference.empty() != sets.front().reference.empty()) {
      const EvalSet& with = s.reference.empty() ? sets.front() : s;
      const EvalSet& without = s.reference.empty() ? s : sets.front();
      return Status::Invalid("data folder '" + dir + "': set '" + with.name +
                             "' has reference outputs (output_K.pb) but set '" + without.name +
                             "' has none; give them for every set or for none");
    }
  }
  return sets;
}

Status LoadReferenceData(const std::string& dir, const std::vector<std::string>& output_names,
                         std::vector<EvalSet>* sets) {
  std::string root;
  SY_RETURN_IF_ERROR(CheckFolder(dir, "reference folder", &root));
  SY_ASSIGN_OR_RETURN(std::vector<Entry> entries, ListFolder(dir, root));
  std::vector<Entry> dirs, files;
  SY_RETURN_IF_ERROR(SplitListing(dir, entries, &dirs, &files));
  std::vector<std::string> set_names;
  for (const EvalSet& s : *sets) set_names.push_back(s.name);

  std::vector<SetFiles> read(sets->size());
  if (dirs.empty()) {
    if (sets->size() != 1) {
      return Status::Invalid("reference folder '" + dir +
                             "' holds one set of files but the data has " +
                             std::to_string(sets->size()) + " sets (" + Join(set_names) +
                             "); give one subfolder per set");
    }
    SY_ASSIGN_OR_RETURN(read[0], ReadSetFolder(dir, set_names[0], files, {}, output_names, true));
  } else {
    std::map<std::string, const Entry*> by_name;
    for (const Entry& d : dirs) by_name[d.name] = &d;
    std::vector<std::string> missing, extra;
    for (const std::string& n : set_names) {
      if (!by_name.count(n)) missing.push_back(n);
    }
    const std::set<std::string> known(set_names.begin(), set_names.end());
    for (const Entry& d : dirs) {
      if (!known.count(d.name)) extra.push_back(d.name);
    }
    if (!missing.empty() || !extra.empty()) {
      return Status::Invalid("reference folder '" + dir + "' does not match the data's sets: " +
                             "missing " + Join(missing) + "; not in the data " + Join(extra));
    }
    for (size_t i = 0; i < sets->size(); ++i) {
      const Entry& d = *by_name[set_names[i]];
      SY_ASSIGN_OR_RETURN(std::vector<Entry> listing, ListFolder(d.path, root));
      SY_ASSIGN_OR_RETURN(read[i], ReadSetFolder(d.path, d.name, listing, {}, output_names, true));
    }
  }
  // Everything read: only now touch the caller's sets.
  for (size_t i = 0; i < sets->size(); ++i) {
    EvalSet& s = (*sets)[i];
    s.files.resize(s.files.size() - std::min(s.files.size(), s.reference.size()));
    AppendFiles(read[i].outputs, output_names, &s);
    s.reference = Tensors(std::move(read[i].outputs));
    s.reference_source = "reference-dir";
  }
  return Status::Ok();
}

// --- hashes -------------------------------------------------------------------------------

namespace {

// Incremental sha256 so that gigabytes of data are hashed without a copy.
class Hasher {
 public:
  Hasher() : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr); }
  void Bytes(const void* p, size_t n) { EVP_DigestUpdate(ctx_.get(), p, n); }
  void U64(uint64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));  // little-endian
    Bytes(b, 8);
  }
  void Str(const std::string& s) {
    U64(s.size());
    Bytes(s.data(), s.size());
  }
  void TensorFields(const Tensor& t) {
    Str(DataTypeName(t.dtype()));
    U64(t.shape().size());
    for (int64_t d : t.shape()) U64(static_cast<uint64_t>(d));
    if (t.dtype() == DataType::kString) {
      U64(t.strings().size());
      for (const std::string& s : t.strings()) Str(s);
    } else {
      U64(t.nbytes());
      Bytes(t.raw(), t.nbytes());
    }
  }
  std::string Hex() {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    EVP_DigestFinal_ex(ctx_.get(), md, &n);
    static const char* k = "0123456789abcdef";
    std::string s;
    for (unsigned i = 0; i < n; ++i) {
      s += k[md[i] >> 4];
      s += k[md[i] & 15];
    }
    return s;
  }

 private:
  struct Free {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
  };
  std::unique_ptr<EVP_MD_CTX, Free> ctx_;
};

}  // namespace

std::string HashTensor(const Tensor& t) {
  Hasher h;
  h.TensorFields(t);
  return h.Hex();
}

std::string HashTensorMap(const TensorMap& m) {
  Hasher h;
  h.U64(m.size());
  for (const auto& [name, t] : m) {  // std::map: name order
    h.Str(name);
    h.TensorFields(t);
  }
  return h.Hex();
}

}  // namespace switchyard
