// The release record's target section and its Markdown rendering (record.md).
#include <google/protobuf/stubs/common.h>
#include <openssl/crypto.h>
#include <sqlite3.h>
#include <sys/utsname.h>

#include <cmath>
#include <iomanip>
#include <oneapi/dnnl/dnnl.hpp>
#include <sstream>

#include "build/target.h"
#include "tune/tuner_internal.h"

extern "C" char* openblas_get_config(void);

namespace switchyard::tuner {
using ojson = nlohmann::ordered_json;

ojson TargetJson(const Target& t) {
  const dnnl_version_t* dv = dnnl_version();
  std::ostringstream dnnl;
  dnnl << dv->major << "." << dv->minor << "." << dv->patch << " (" << dv->hash << ")";
  struct utsname u {};
  uname(&u);
  ojson j = {{"kind", t.name}};
  if (t.IsCuda()) {
    const GpuTarget& g = t.gpu;
    ojson gpu = {{"name", g.name},
                 {"compute_capability", std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor)},
                 {"arch", g.Arch()},
                 {"sm_count", g.sm_count},
                 {"memory_bytes", g.memory_bytes},
                 {"driver", g.driver},
                 {"cuda_runtime", g.runtime},
                 {"cublaslt", g.cublaslt},
                 {"cudnn", g.cudnn},
                 {"present", g.present}};
    if (!g.error.empty()) gpu["error"] = g.error;
    j["gpu"] = gpu;
  }
  // The host CPU: the whole target on cpu; on cuda it runs the host side (the features
  // matter to cpu kernels only and are not part of a cuda target).
  j["cpu_model"] = t.cpu_model;
  j["logical_cpus"] = t.cores;
  if (!t.IsCuda()) j["features"] = t.features.Names();
  j["os"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
  j["libraries"] = {{"onednn", dnnl.str()},
                    {"openblas", openblas_get_config()},
                    {"sqlite", sqlite3_libversion()},
                    {"protobuf", google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION)},
                    {"openssl", OpenSSL_version(OPENSSL_VERSION)},
                    {"compiler", __VERSION__}};
  return j;
}

namespace {

std::string Num(const ojson& v, int digits = 3) {
  if (v.is_null()) return "n/a";
  if (!v.is_number()) return v.dump();
  const double d = v.get<double>();
  std::ostringstream os;
  if (d != 0 && (std::fabs(d) < 1e-3 || std::fabs(d) >= 1e6)) os << std::scientific << std::setprecision(2) << d;
  else os << std::fixed << std::setprecision(digits) << d;
  return os.str();
}

std::string Route(const ojson& r) {
  const std::string s = r.is_string() ? r.get<std::string>() : "";
  return s.empty() ? "(default)" : "`" + s + "`";
}

std::string Mb(const ojson& v) {
  return v.is_number() ? Num(v.get<double>() / (1024.0 * 1024.0), 1) + " MiB" : "n/a";
}

std::string Accuracy(const ojson& acc) {
  if (!acc.is_object() || !acc.contains("outputs")) return "n/a";
  std::string s;
  for (const auto& [name, o] : acc.at("outputs").items()) {
    s += (s.empty() ? "" : "; ") + name + ": " + o.value("metric", "?") + " " + Num(o.value("worst", ojson())) +
         " (≤ " + Num(o.value("threshold", ojson())) + ")";
  }
  return s;
}

}  // namespace

std::string RenderRecordMarkdown(const ojson& record) {
  // A mutable copy: operator[] on a missing key then yields null ("n/a"), never UB.
  ojson r = record;
  std::ostringstream md;
  ojson& sel = r.at("selected");
  ojson& base = r.at("baseline");
  md << "# Tuning record\n\n";
  md << "Created " << r.value("created_at", "") << " by switchyard " << r["tool"].value("version", "") << " ("
     << r["tool"].value("commit", "") << ").\n\n";
  md << "Command: `" << r.value("command", "") << "`\n\n";
  if (r.value("status", "") == "interrupted") {
    md << "**Interrupted:** " << r["unfinished"].value("remaining", "") << ".\n\n";
  }
  md << "## Decision\n\n";
  if (sel.is_null()) {
    md << "**No engine selected.** " << r["decision"].value("reason", "") << "\n\n";
  } else {
    md << "**Selected route:** " << Route(sel["route"]) << (sel.value("is_baseline", false) ? " (the baseline)" : "")
       << "\n\n";
    if (sel.contains("speedup_ci95")) {
      md << "**Speedup over the baseline:** " << Num(sel["speedup"]) << "x (95% interval " << Num(sel["speedup_ci95"][0])
         << " – " << Num(sel["speedup_ci95"][1]) << ")\n\n";
    }
    md << "Why: " << r["decision"].value("reason", "") << "\n\n";
  }
  for (auto& d : r["decision"]["demoted"]) {
    md << "- demoted " << Route(d["route"]) << ": " << d.value("reason", "") << "\n";
  }
  md << "\n## Baseline vs selected\n\n| | baseline | selected |\n|---|---|---|\n";
  auto row = [&](const char* label, const char* key, bool bytes) {
    md << "| " << label << " | " << (bytes ? Mb(base.value(key, ojson())) : Num(base.value(key, ojson()))) << " | "
       << (sel.is_null() ? "n/a" : bytes ? Mb(sel.value(key, ojson())) : Num(sel.value(key, ojson()))) << " |\n";
  };
  md << "| route | " << Route(base["route"]) << " | " << (sel.is_null() ? "n/a" : Route(sel["route"])) << " |\n";
  row("p50 (ms)", "p50_ms", false);
  row("p95 (ms)", "p95_ms", false);
  row("p99 (ms)", "p99_ms", false);
  row("throughput (/s)", "throughput_per_s", false);
  row("peak memory (process)", "peak_memory_bytes", true);
  md << "| accuracy (worst over sets) | " << Accuracy(base.value("accuracy", ojson())) << " | "
     << (sel.is_null() ? "n/a" : Accuracy(sel.value("accuracy", ojson()))) << " |\n\n";

  ojson& m = r.at("model");
  md << "## Model\n\n- file: `" << m.value("path", "") << "`\n- sha256: `" << m.value("sha256", "") << "`\n";
  for (const auto& i : m.value("inputs", ojson::array())) md << "- input `" << i.value("name", "") << "`: " << i.value("type", "") << "\n";
  for (const auto& o : m.value("outputs", ojson::array())) md << "- output `" << o.value("name", "") << "`: " << o.value("type", "") << "\n";
  if (!r.value("shapes", ojson::array()).empty()) md << "- shapes: `" << r["shapes"].dump() << "`\n";

  ojson& t = r.at("target");
  md << "\n## Target\n\n";
  if (t.value("kind", "") == "cuda") {
    ojson& g = t["gpu"];
    md << "- GPU: " << g.value("name", "") << " (compute capability " << g.value("compute_capability", "")
       << ", " << g.value("sm_count", 0) << " SMs, "
       << (g["memory_bytes"].is_number() ? Num(g["memory_bytes"].get<double>() / (1024.0 * 1024.0 * 1024.0), 1) + " GiB"
                                         : std::string("n/a"))
       << ")";
    if (!g.value("present", true)) md << " — no device found" << (g.contains("error") ? ": " + g.value("error", "") : "");
    md << "\n- NVIDIA driver " << g.value("driver", "") << ", CUDA runtime " << g.value("cuda_runtime", "")
       << ", cuBLASLt " << g.value("cublaslt", "") << ", cuDNN " << g.value("cudnn", "") << "\n";
    md << "- host CPU: " << t.value("cpu_model", "") << ", " << t.value("logical_cpus", 0) << " logical CPUs\n";
  } else {
    md << "- CPU: " << t.value("cpu_model", "") << ", " << t.value("logical_cpus", 0) << " logical CPUs\n";
    std::string feats;
    for (const auto& f : t.value("features", ojson::array())) feats += (feats.empty() ? "" : " ") + f.get<std::string>();
    md << "- features: " << feats << "\n";
  }
  md << "- OS: " << t.value("os", "") << "\n- fingerprint: `" << t.value("fingerprint", "") << "`\n";
  for (auto& [lib, v] : t["libraries"].items()) md << "- " << lib << ": " << v.get<std::string>() << "\n";

  ojson& d = r.at("data");
  md << "\n## Evaluation data\n\n- source: " << d.value("source", "");
  if (d.contains("dir")) md << " (`" << d["dir"].get<std::string>() << "`)";
  if (d.contains("input_specs")) md << ", specs `" << d["input_specs"].dump() << "`, seed " << d.value("seed", 0);
  md << "\n- input profile: `" << d.value("input_profile", "") << "`\n- " << d.value("retention", "") << "\n\n";
  md << "| set | inputs (sha256) | shapes | reference |\n|---|---|---|---|\n";
  for (auto& s : d["sets"]) {
    std::string shapes;
    for (auto& i : s["inputs"]) {
      shapes += (shapes.empty() ? "" : ", ") + i.value("name", "") + " " + i.value("dtype", "") + i["shape"].dump();
    }
    md << "| " << s.value("name", "") << " | `" << s.value("inputs_sha256", "").substr(0, 16) << "…` | " << shapes
       << " | " << s["reference"].value("source", "") << " `" << s["reference"].value("outputs_sha256", "").substr(0, 16)
       << "…` |\n";
  }

  ojson& a = r.at("accuracy_policy");
  md << "\n## Policies\n\n- accuracy: " << a.value("metric", "") << " ≤ " << Num(a.value("threshold", ojson()));
  for (auto& [name, p] : a["per_output"].items()) {
    md << "; `" << name << "`: " << p.value("metric", "") << " ≤ " << Num(p.value("threshold", ojson()));
  }
  md << "; " << a.value("non_finite", "") << "\n";
  ojson& mp = r.at("measurement_policy");
  md << "- measurement: " << mp.value("method", "") << "\n- selection: " << mp.value("rule", "")
     << " (min improvement " << Num(mp.value("min_improvement", 0.0) * 100, 1) << "%)\n";

  ojson& s = r.at("search");
  ojson& c = r.at("counts");
  ojson& cost = r.at("cost");
  md << "\n## Search\n\n- strategy: " << s.value("strategy", "") << (s.value("sweep", "").empty() ? "" : ", sweep `" + s.value("sweep", "") + "`")
     << ", space of " << s.value("space_size", 0) << " routes; " << (s.value("covered", false) ? "covered" : "not covered")
     << " (stopped by " << s.value("stopped_by", "") << ")\n";
  md << "- candidates " << c.value("candidates", 0) << ", unique engines " << c.value("unique_engines", 0) << ", duplicates "
     << c.value("duplicates", 0) << ", reused from the database " << c.value("reused", 0) << ", passed "
     << c.value("passed", 0) << ", rejected for accuracy " << c.value("rejected_accuracy", 0) << ", failed "
     << c.value("failed", 0) << " (build " << c.value("build_failed", 0) << ", crashed " << c.value("crashed", 0)
     << ", timeout " << c.value("timeout", 0) << ")\n";
  md << "- cost (one-off): " << Num(cost["wall_s"], 1) << " s wall = reference " << Num(cost["reference_s"], 1) << " s, build "
     << Num(cost["build_s"], 1) << " s, accuracy " << Num(cost["accuracy_s"], 1) << " s, measurement "
     << Num(cost["measure_s"], 1) << " s, validation " << Num(cost["validate_s"], 1) << " s (plus process start-up)\n";

  ojson& v = r.at("validation");
  md << "\n## Long-tail validation (" << v.value("engine", "") << ")\n\n";
  for (auto& chk : v["checks"]) {
    md << "- " << (chk.value("passed", false) ? "passed" : "FAILED") << (chk.value("skipped", false) ? " (skipped)" : "")
       << ": " << chk.value("name", "");
    if (chk.contains("detail")) md << " — " << chk["detail"].get<std::string>();
    if (chk.contains("sessions")) md << " — " << chk.value("sessions", 0) << " sessions, " << chk.value("runs", 0) << " runs";
    md << "\n";
  }

  if (r["scope"].is_object()) {
    md << "\n## Scope\n\nCovered: " << r["scope"]["covered"]["input_sets"].size() << " input set(s), measured at concurrency "
       << r["scope"]["covered"].value("measured_concurrency", 1) << ", outputs checked identical with "
       << r["scope"]["covered"].value("validated_concurrent_sessions", 0) << " concurrent sessions.\n\nNot covered:\n";
    for (auto& n : r["scope"]["not_covered"]) md << "- " << n.get<std::string>() << "\n";
  }
  md << "\n## Candidates\n\n| # | route | verdict | speedup (95% CI) | accuracy | note |\n|---|---|---|---|---|---|\n";
  int n = 0;
  for (auto& cj : r["candidates"]) {
    std::string sp = "";
    if (cj.contains("speedup")) sp = Num(cj["speedup"]) + " (" + Num(cj["speedup_ci95"][0]) + "–" + Num(cj["speedup_ci95"][1]) + ")";
    std::string note = cj.value("error", "");
    if (cj.value("reused", false)) note = "from the database" + std::string(note.empty() ? "" : "; ") + note;
    if (cj.value("baseline", false)) note = "the baseline" + std::string(note.empty() ? "" : "; ") + note;
    for (char& ch : note) {
      if (ch == '|' || ch == '\n') ch = ' ';
    }
    md << "| " << ++n << " | " << Route(cj["route"]) << " | " << cj.value("status", "") << " | " << sp << " | "
       << Accuracy(cj.value("accuracy", ojson())) << " | " << note.substr(0, 200) << " |\n";
  }
  for (const auto& note : r.value("notes", ojson::array())) md << "\nNote: " << note.get<std::string>() << "\n";
  return md.str();
}

}  // namespace switchyard::tuner
