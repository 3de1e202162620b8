// `switchyard db list|export|import`: look into a tuning database and move its results
// between machines as JSON lines (format: docs/tuning-db.md).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "release/audit.h"
#include "tune/database.h"
#include "tune/tuner.h"

namespace switchyard::cli {
namespace {

struct DbArgs {
  std::string db, out, input, status, model, older_than, audit;
  bool json = false;
  bool replace = false;
};

// Writes `bytes` to `path` through a temporary file in the same folder, fsync and rename:
// readers see the old file or the whole new one. Mode 0600 like the database it came from.
Status WriteAtomic0600(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IoError("cannot write " + tmp + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      std::remove(tmp.c_str());
      return Status::IoError("writing " + tmp + " failed: " + why);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    std::remove(tmp.c_str());
    return Status::IoError("cannot flush " + tmp + ": " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    return Status::IoError("cannot rename " + tmp + " to " + path + ": " + why);
  }
  return Status::Ok();
}

std::string P50(const CandidateResult& c) {
  const auto it = c.measurement.find("p50_ms");
  if (it == c.measurement.end() || !it->is_number()) return "-";
  std::ostringstream s;
  s << std::fixed << std::setprecision(3) << it->get<double>();
  return s.str();
}

int List(const DbArgs& a) {
  auto db = TuningDatabase::Open(a.db, {.create_if_missing = false});
  if (!db.ok()) return ReportError(db.status());
  CandidateFilter filter;
  filter.status = a.status;
  filter.model_sha256 = a.model;
  auto rows = (*db)->ListCandidates(filter);
  if (!rows.ok()) return ReportError(rows.status());
  if (a.json) {
    for (const CandidateResult& c : *rows) std::cout << CandidateToJson(c).dump() << "\n";
    return 0;
  }
  size_t route_w = 5;
  for (const CandidateResult& c : *rows) {
    route_w = std::max(route_w, c.route.empty() ? size_t{9} : c.route.size());
  }
  route_w = std::min<size_t>(route_w, 80);
  std::cout << std::left << std::setw(static_cast<int>(route_w)) << "route"
            << "  " << std::setw(17) << "status"
            << "  " << std::right << std::setw(10) << "p50_ms"
            << "  " << std::left << "engine\n";
  for (const CandidateResult& c : *rows) {
    std::cout << std::left << std::setw(static_cast<int>(route_w))
              << (c.route.empty() ? "(default)" : c.route) << "  " << std::setw(17) << c.status
              << "  " << std::right << std::setw(10) << P50(c) << "  " << std::left
              << (c.engine_sha256.empty() ? "-" : c.engine_sha256.substr(0, 12)) << "\n";
  }
  std::cout << rows->size() << " candidates in " << a.db << "\n";
  return 0;
}

int Export(const DbArgs& a) {
  auto db = TuningDatabase::Open(a.db, {.create_if_missing = false});
  if (!db.ok()) return ReportError(db.status());
  if (a.out.empty() || a.out == "-") {
    Status s = (*db)->ExportJsonLines(std::cout);
    return s.ok() ? 0 : ReportError(s);
  }
  std::ostringstream text;
  Status s = (*db)->ExportJsonLines(text);
  if (!s.ok()) return ReportError(s);
  s = WriteAtomic0600(a.out, text.str());
  return s.ok() ? 0 : ReportError(s);
}

int Import(const DbArgs& a) {
  std::ifstream in(a.input, std::ios::binary);
  if (!in) return ReportError(Status::NotFound("cannot read " + a.input));
  auto db = TuningDatabase::Open(a.db);
  if (!db.ok()) return ReportError(db.status());
  auto stats = (*db)->ImportJsonLines(in, a.input, a.replace);
  if (!stats.ok()) return ReportError(stats.status());
  std::cout << "imported " << stats->inserted << " new";
  if (a.replace) std::cout << ", replaced " << stats->replaced;
  std::cout << " candidates into " << a.db << "\n";
  return 0;
}

// "30d", "2w", or what ParseDuration takes ("12h", "90m", "30s").
Result<double> ParseAge(const std::string& text) {
  if (!text.empty() && (text.back() == 'd' || text.back() == 'w')) {
    SY_ASSIGN_OR_RETURN(const double v, ParseDuration(text.substr(0, text.size() - 1) + "h"));
    return v * (text.back() == 'd' ? 24 : 24 * 7);
  }
  return ParseDuration(text);
}

int Purge(const DbArgs& a) {
  if (a.older_than.empty() && a.model.empty()) {
    return ReportError(Status::Invalid("db purge: give --older-than DURATION and/or --model SHA256"));
  }
  int64_t cutoff = 0;
  double age_s = 0;
  if (!a.older_than.empty()) {
    auto age = ParseAge(a.older_than);
    if (!age.ok()) return ReportError(age.status().WithContext("--older-than"));
    age_s = *age;
    cutoff = static_cast<int64_t>(std::time(nullptr)) - static_cast<int64_t>(age_s);
    if (cutoff <= 0) cutoff = 1;  // older than the epoch: nothing, but still a filter
  }
  auto db = TuningDatabase::Open(a.db, {.create_if_missing = false});
  if (!db.ok()) return ReportError(db.status());
  const std::string audit_path =
      !a.audit.empty() ? a.audit
                       : (std::filesystem::path(a.db).parent_path() / "audit.jsonl").string();
  nlohmann::json entry = release::AuditBase("db purge", "");
  entry["db"] = std::filesystem::absolute(a.db).string();
  entry["proposed"] = {{"older_than", a.older_than.empty() ? nlohmann::json() : nlohmann::json(a.older_than)},
                       {"created_before_unix", cutoff == 0 ? nlohmann::json() : nlohmann::json(cutoff)},
                       {"model_sha256", a.model.empty() ? nlohmann::json() : nlohmann::json(a.model)}};
  if (!a.model.empty()) entry["model_sha256"] = a.model;
  auto stats = (*db)->Purge(cutoff, a.model);
  if (!stats.ok()) {
    entry["outcome"] = "error";
    entry["reason"] = stats.status().ToString();
    (void)release::AppendAudit(audit_path, entry);
    return ReportError(stats.status());
  }
  entry["outcome"] = "purged";
  entry["executed"] = {{"candidates_deleted", stats->candidates},
                       {"runs_deleted", stats->runs},
                       {"models", stats->models}};
  entry["reason"] = "deleted " + std::to_string(stats->candidates) + " candidates and " +
                    std::to_string(stats->runs) + " runs";
  std::cout << "purged " << stats->candidates << " candidates and " << stats->runs << " runs from "
            << a.db << "\n";
  Status s = release::AppendAudit(audit_path, entry);
  if (!s.ok()) {
    std::cerr << "error: purge done, but its audit line was not written: " << s.ToString() << "\n";
    return 1;
  }
  std::cout << "audit line appended to " << audit_path << "\n";
  return 0;
}

}  // namespace

void AddDbCommand(CLI::App& app, int* exit_code) {
  auto* db = app.add_subcommand("db", "Inspect, export and import a tuning database");
  db->require_subcommand(1);
  auto args = std::make_shared<DbArgs>();

  auto* list = db->add_subcommand("list", "List stored candidates: route, status, p50, engine");
  list->add_option("--db", args->db, "tuning database file")->required();
  list->add_option("--status", args->status, "only candidates with this status");
  list->add_option("--model", args->model, "only candidates of this model sha256");
  list->add_flag("--json", args->json, "one JSON object per candidate and line");
  list->callback([=] { *exit_code = List(*args); });

  auto* exp = db->add_subcommand("export", "Write every candidate as JSON lines");
  exp->add_option("--db", args->db, "tuning database file")->required();
  exp->add_option("-o,--out", args->out, "output file (written atomically); default stdout");
  exp->callback([=] { *exit_code = Export(*args); });

  auto* imp = db->add_subcommand(
      "import", "Add candidates from JSON lines; all or nothing, duplicates refused");
  imp->add_option("--db", args->db, "tuning database file (created if missing)")->required();
  imp->add_option("INPUT", args->input, "JSON-lines file from `db export`")->required();
  imp->add_flag("--replace", args->replace, "overwrite stored results with the same key");
  imp->callback([=] { *exit_code = Import(*args); });

  auto* purge = db->add_subcommand(
      "purge", "Delete stored results by age and/or model; appends an audit line saying what went");
  purge->add_option("--db", args->db, "tuning database file")->required();
  purge->add_option("--older-than", args->older_than,
                    "results stored longer ago than this (30d, 2w, 12h, 90m, 45s)");
  purge->add_option("--model", args->model, "results of this model sha256");
  purge->add_option("--audit", args->audit,
                    "audit log to append to (default: audit.jsonl beside the database)");
  purge->callback([=] { *exit_code = Purge(*args); });
}

}  // namespace switchyard::cli
