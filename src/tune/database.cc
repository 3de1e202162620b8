// TuningDatabase: runs and candidates (store, find, mismatches, list, integrity).
// Every statement is prepared with bound parameters; no value is ever spliced into SQL.
#include "tune/database.h"

#include <sqlite3.h>

#include "tune/database_sqlite.h"

namespace switchyard {
namespace {

using tuning_db::NowSeconds;
using tuning_db::Stmt;
using tuning_db::Transaction;

constexpr const char* kCandidateColumns =
    "id, run_id, model_sha256, input_profile, target_fingerprint, tool_version, route, "
    "engine_sha256, status, error, accuracy, measurement, build_s, accuracy_s, measure_s, "
    "created_at";

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '%') {
      out += "%25";
    } else if (c == '|') {
      out += "%7C";
    } else {
      out += c;
    }
  }
  return out;
}

Result<nlohmann::json> ParseJsonColumn(const std::string& text, const char* column) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::ParseError(std::string("stored ") + column + " is not valid JSON");
  }
  return j;
}

// Reads a row selected with kCandidateColumns.
Result<CandidateResult> ReadCandidate(const Stmt& s) {
  CandidateResult c;
  c.id = s.Int(0);
  c.run_id = s.Int(1);
  c.key = {s.Text(2), s.Text(3), s.Text(4), s.Text(5)};
  c.route = s.Text(6);
  c.engine_sha256 = s.Text(7);
  c.status = s.Text(8);
  c.error = s.Text(9);
  SY_ASSIGN_OR_RETURN(c.accuracy, ParseJsonColumn(s.Text(10), "accuracy"));
  SY_ASSIGN_OR_RETURN(c.measurement, ParseJsonColumn(s.Text(11), "measurement"));
  c.build_s = s.Real(12);
  c.accuracy_s = s.Real(13);
  c.measure_s = s.Real(14);
  c.created_at = s.Int(15);
  return c;
}

Status Validate(const CandidateResult& c) {
  const std::pair<const char*, const std::string*> parts[] = {
      {"model_sha256", &c.key.model_sha256},
      {"input_profile", &c.key.input_profile},
      {"target_fingerprint", &c.key.target_fingerprint},
      {"tool_version", &c.key.tool_version}};
  for (const auto& [name, value] : parts) {
    if (value->empty()) return Status::Invalid(std::string("candidate has an empty ") + name);
  }
  if (!IsCandidateStatus(c.status)) {
    return Status::Invalid("candidate for route '" + c.route + "' has unknown status '" + c.status +
                           "' (passed|rejected_accuracy|build_failed|crashed|timeout|duplicate)");
  }
  if (!c.accuracy.is_object() || !c.measurement.is_object()) {
    return Status::Invalid("candidate for route '" + c.route +
                           "': accuracy and measurement must be JSON objects");
  }
  return Status::Ok();
}

}  // namespace

bool IsCandidateStatus(const std::string& status) {
  for (const char* s : kCandidateStatuses) {
    if (status == s) return true;
  }
  return false;
}

std::string CandidateResult::Key() const {
  return Escape(key.model_sha256) + "|" + Escape(key.input_profile) + "|" +
         Escape(key.target_fingerprint) + "|" + Escape(key.tool_version) + "|" + Escape(route);
}

std::string KeyMismatch::Describe() const {
  std::string parts;
  for (size_t i = 0; i < differing.size(); ++i) {
    if (i > 0) parts += ", ";
    parts += differing[i];
  }
  const std::string route = stored.route.empty() ? "(default)" : stored.route;
  return "stored result for route " + route + " (candidate " + std::to_string(stored.id) +
         ") was measured with a different " + parts + "; not reused";
}

Result<int64_t> TuningDatabase::BeginRun(const RunInfo& info) {
  Stmt s(db_,
         "INSERT INTO runs (started_at, model_sha256, input_profile, target_fingerprint, "
         "tool_version, command, status) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running')");
  s.Bind(1, NowSeconds())
      .Bind(2, info.key.model_sha256)
      .Bind(3, info.key.input_profile)
      .Bind(4, info.key.target_fingerprint)
      .Bind(5, info.key.tool_version)
      .Bind(6, info.command);
  if (s.Step() != SQLITE_DONE) return Error("cannot record run");
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
}

Status TuningDatabase::FinishRun(int64_t run_id, const std::string& status) {
  Stmt s(db_, "UPDATE runs SET finished_at = ?1, status = ?2 WHERE id = ?3");
  s.Bind(1, NowSeconds()).Bind(2, status).Bind(3, run_id);
  if (s.Step() != SQLITE_DONE) return Error("cannot finish run " + std::to_string(run_id));
  if (sqlite3_changes(db_) != 1) {
    return Status::NotFound(path_ + ": no run " + std::to_string(run_id));
  }
  return Status::Ok();
}

Result<std::vector<RunRecord>> TuningDatabase::ListRuns() {
  Stmt s(db_,
         "SELECT id, started_at, finished_at, model_sha256, input_profile, target_fingerprint, "
         "tool_version, command, status FROM runs ORDER BY id");
  std::vector<RunRecord> runs;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    RunRecord r;
    r.id = s.Int(0);
    r.started_at = s.Int(1);
    r.finished_at = s.Int(2);
    r.info.key = {s.Text(3), s.Text(4), s.Text(5), s.Text(6)};
    r.info.command = s.Text(7);
    r.status = s.Text(8);
    runs.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return Error("cannot list runs");
  return runs;
}

Result<int64_t> TuningDatabase::PutLocked(const CandidateResult& c, bool replace, bool* replaced) {
  SY_RETURN_IF_ERROR(Validate(c));
  const std::string key = c.Key();
  int64_t existing = 0;
  {
    Stmt find(db_, "SELECT id FROM candidates WHERE key = ?1");
    find.Bind(1, key);
    const int rc = find.Step();
    if (rc == SQLITE_ROW) {
      existing = find.Int(0);
    } else if (rc != SQLITE_DONE) {
      return Error("cannot look up candidate");
    }
  }
  if (existing != 0 && !replace) {
    return Status::FailedPrecondition(
        path_ + ": a result for route " + (c.route.empty() ? "(default)" : "'" + c.route + "'") +
        " with this model, input profile, target " +
        "and tool version is already stored (candidate " + std::to_string(existing) +
        "); replace it explicitly (--replace) to overwrite");
  }
  *replaced = existing != 0;
  // Same column order for both statements: ?1..?16 bind identically.
  const char* sql =
      existing != 0
          ? "UPDATE candidates SET run_id = ?1, model_sha256 = ?2, input_profile = ?3, "
            "target_fingerprint = ?4, tool_version = ?5, route = ?6, engine_sha256 = ?7, "
            "status = ?8, error = ?9, accuracy = ?10, measurement = ?11, build_s = ?12, "
            "accuracy_s = ?13, measure_s = ?14, created_at = ?15 WHERE key = ?16"
          : "INSERT INTO candidates (run_id, model_sha256, input_profile, target_fingerprint, "
            "tool_version, route, engine_sha256, status, error, accuracy, measurement, "
            "build_s, accuracy_s, measure_s, created_at, key) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)";
  Stmt s(db_, sql);
  if (c.run_id > 0) {
    s.Bind(1, c.run_id);
  } else {
    s.BindNull(1);
  }
  s.Bind(2, c.key.model_sha256)
      .Bind(3, c.key.input_profile)
      .Bind(4, c.key.target_fingerprint)
      .Bind(5, c.key.tool_version)
      .Bind(6, c.route)
      .Bind(7, c.engine_sha256)
      .Bind(8, c.status)
      .Bind(9, c.error)
      .Bind(10, c.accuracy.dump())
      .Bind(11, c.measurement.dump())
      .Bind(12, c.build_s)
      .Bind(13, c.accuracy_s)
      .Bind(14, c.measure_s)
      .Bind(15, c.created_at != 0 ? c.created_at : NowSeconds())
      .Bind(16, key);
  if (s.Step() != SQLITE_DONE) return Error("cannot store candidate for route '" + c.route + "'");
  return existing != 0 ? existing : static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
}

Result<int64_t> TuningDatabase::Put(const CandidateResult& result, bool replace) {
  Transaction tx(db_);
  if (tx.Begin() != SQLITE_OK) return Error("cannot begin transaction");
  bool replaced = false;
  SY_ASSIGN_OR_RETURN(const int64_t id, PutLocked(result, replace, &replaced));
  if (tx.Commit() != SQLITE_OK) return Error("cannot commit candidate");
  return id;
}

Result<std::optional<CandidateResult>> TuningDatabase::Find(const CandidateKey& key,
                                                            const std::string& route) {
  CandidateResult probe;
  probe.key = key;
  probe.route = route;
  const std::string sql =
      std::string("SELECT ") + kCandidateColumns + " FROM candidates WHERE key = ?1";
  Stmt s(db_, sql.c_str());
  s.Bind(1, probe.Key());
  const int rc = s.Step();
  if (rc == SQLITE_DONE) return std::optional<CandidateResult>();
  if (rc != SQLITE_ROW) return Error("cannot look up candidate");
  SY_ASSIGN_OR_RETURN(CandidateResult c, ReadCandidate(s));
  return std::optional<CandidateResult>(std::move(c));
}

Result<std::vector<KeyMismatch>> TuningDatabase::FindMismatches(const CandidateKey& key,
                                                                const std::string& route) {
  const std::string sql = std::string("SELECT ") + kCandidateColumns +
                          " FROM candidates WHERE model_sha256 = ?1 AND route = ?2 ORDER BY id";
  Stmt s(db_, sql.c_str());
  s.Bind(1, key.model_sha256).Bind(2, route);
  std::vector<KeyMismatch> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    SY_ASSIGN_OR_RETURN(CandidateResult c, ReadCandidate(s));
    if (c.key == key) continue;
    KeyMismatch m;
    if (c.key.input_profile != key.input_profile) m.differing.push_back("input_profile");
    if (c.key.target_fingerprint != key.target_fingerprint) {
      m.differing.push_back("target_fingerprint");
    }
    if (c.key.tool_version != key.tool_version) m.differing.push_back("tool_version");
    m.stored = std::move(c);
    out.push_back(std::move(m));
  }
  if (rc != SQLITE_DONE) return Error("cannot look up candidates");
  return out;
}

Result<std::vector<CandidateResult>> TuningDatabase::ListCandidates(const CandidateFilter& filter) {
  // A fixed statement: an empty filter value disables its clause.
  const std::string sql = std::string("SELECT ") + kCandidateColumns +
                          " FROM candidates WHERE (?1 = '' OR model_sha256 = ?1) AND "
                          "(?2 = '' OR route = ?2) AND (?3 = '' OR status = ?3) AND "
                          "(?4 = 0 OR run_id = ?4) ORDER BY id";
  Stmt s(db_, sql.c_str());
  s.Bind(1, filter.model_sha256).Bind(2, filter.route).Bind(3, filter.status);
  s.Bind(4, filter.run_id);
  std::vector<CandidateResult> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    SY_ASSIGN_OR_RETURN(CandidateResult c, ReadCandidate(s));
    out.push_back(std::move(c));
  }
  if (rc != SQLITE_DONE) return Error("cannot list candidates");
  return out;
}

Result<std::string> TuningDatabase::IntegrityCheck() {
  Stmt s(db_, "PRAGMA integrity_check");
  std::string out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    if (!out.empty()) out += '\n';
    out += s.Text(0);
  }
  if (rc != SQLITE_DONE) return Error("integrity check failed to run");
  return out;
}

Result<PurgeStats> TuningDatabase::Purge(int64_t older_than_unix, const std::string& model_sha256) {
  if (older_than_unix <= 0 && model_sha256.empty()) {
    return Status::Invalid(path_ + ": purge needs an age or a model (refusing to delete everything)");
  }
  SY_RETURN_IF_ERROR(Exec("PRAGMA secure_delete = ON"));
  PurgeStats stats;
  {
    Transaction tx(db_);
    if (tx.Begin() != SQLITE_OK) return Error("cannot begin transaction");
    // Fixed statements: 0 / '' disables a clause.
    constexpr const char* kWhere = " WHERE (?1 = 0 OR created_at < ?1) AND (?2 = '' OR model_sha256 = ?2)";
    {
      Stmt s(db_, (std::string("SELECT DISTINCT model_sha256 FROM candidates") + kWhere +
                   " ORDER BY model_sha256").c_str());
      s.Bind(1, older_than_unix).Bind(2, model_sha256);
      int rc;
      while ((rc = s.Step()) == SQLITE_ROW) stats.models.push_back(s.Text(0));
      if (rc != SQLITE_DONE) return Error("cannot select candidates to purge");
    }
    {
      Stmt s(db_, (std::string("DELETE FROM candidates") + kWhere).c_str());
      s.Bind(1, older_than_unix).Bind(2, model_sha256);
      if (s.Step() != SQLITE_DONE) return Error("cannot purge candidates");
      stats.candidates = sqlite3_changes(db_);
    }
    {
      Stmt s(db_,
             "DELETE FROM runs WHERE (?1 = 0 OR started_at < ?1) AND (?2 = '' OR model_sha256 = ?2) "
             "AND NOT EXISTS (SELECT 1 FROM candidates c WHERE c.run_id = runs.id)");
      s.Bind(1, older_than_unix).Bind(2, model_sha256);
      if (s.Step() != SQLITE_DONE) return Error("cannot purge runs");
      stats.runs = sqlite3_changes(db_);
    }
    if (tx.Commit() != SQLITE_OK) return Error("cannot commit purge");
  }
  sqlite3_exec(db_, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
  return stats;
}

}  // namespace switchyard
