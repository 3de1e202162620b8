// TuningDatabase: opening (file modes, WAL, schema, checks), runs and candidates.
// Every statement is prepared with bound parameters; no value is ever spliced into SQL.
#include "tune/database.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

namespace switchyard {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta (
  name  TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  started_at         INTEGER NOT NULL,
  finished_at        INTEGER,
  model_sha256       TEXT NOT NULL,
  input_profile      TEXT NOT NULL,
  target_fingerprint TEXT NOT NULL,
  tool_version       TEXT NOT NULL,
  command            TEXT NOT NULL,
  status             TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS candidates (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id             INTEGER,
  key                TEXT NOT NULL UNIQUE,
  model_sha256       TEXT NOT NULL,
  input_profile      TEXT NOT NULL,
  target_fingerprint TEXT NOT NULL,
  tool_version       TEXT NOT NULL,
  route              TEXT NOT NULL,
  engine_sha256      TEXT NOT NULL,
  status             TEXT NOT NULL CHECK (status IN ('passed', 'rejected_accuracy',
                       'build_failed', 'crashed', 'timeout', 'duplicate')),
  error              TEXT NOT NULL,
  accuracy           TEXT NOT NULL,
  measurement        TEXT NOT NULL,
  build_s            REAL NOT NULL,
  accuracy_s         REAL NOT NULL,
  measure_s          REAL NOT NULL,
  created_at         INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS candidates_by_model_route ON candidates (model_sha256, route);
CREATE INDEX IF NOT EXISTS candidates_by_parts ON candidates
  (model_sha256, input_profile, target_fingerprint, tool_version);
CREATE INDEX IF NOT EXISTS candidates_by_run ON candidates (run_id);
)sql";

constexpr const char* kCandidateColumns =
    "id, run_id, model_sha256, input_profile, target_fingerprint, tool_version, route, "
    "engine_sha256, status, error, accuracy, measurement, build_s, accuracy_s, measure_s, "
    "created_at";

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

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

// One prepared statement; finalized on destruction. Bind indexes start at 1.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) {
    rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
  }
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  bool prepared() const { return rc_ == SQLITE_OK; }
  Stmt& Bind(int i, const std::string& v) {
    Note(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Stmt& Bind(int i, int64_t v) {
    Note(sqlite3_bind_int64(stmt_, i, v));
    return *this;
  }
  Stmt& Bind(int i, double v) {
    Note(sqlite3_bind_double(stmt_, i, v));
    return *this;
  }
  Stmt& BindNull(int i) {
    Note(sqlite3_bind_null(stmt_, i));
    return *this;
  }
  // SQLITE_ROW, SQLITE_DONE or an error code (also reported for a failed prepare/bind).
  int Step() {
    if (rc_ != SQLITE_OK) return rc_;
    return sqlite3_step(stmt_);
  }
  std::string Text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, col))
             : std::string();
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Real(int col) const { return sqlite3_column_double(stmt_, col); }

 private:
  void Note(int rc) {
    if (rc_ == SQLITE_OK && rc != SQLITE_OK) rc_ = rc;
  }
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_OK;
};

// Rolls back unless Commit() succeeded: an early error return never leaves a transaction
// open on the connection.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) {}
  ~Transaction() {
    if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  // BEGIN IMMEDIATE takes the write lock up front, so two writers never deadlock upgrading.
  int Begin() {
    const int rc = sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
    open_ = rc == SQLITE_OK;
    return rc;
  }
  int Commit() {
    const int rc = sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) open_ = false;
    return rc;
  }

 private:
  sqlite3* const db_;
  bool open_ = false;
};

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
    return Status::Invalid("candidate for route '" + c.route + "' has unknown status '" +
                           c.status +
                           "' (passed|rejected_accuracy|build_failed|crashed|timeout|duplicate)");
  }
  if (!c.accuracy.is_object() || !c.measurement.is_object()) {
    return Status::Invalid("candidate for route '" + c.route +
                           "': accuracy and measurement must be JSON objects");
  }
  return Status::Ok();
}

// Creates the missing folders of `dir` (mode 0700: results may name private models).
Status MakeParents(const std::filesystem::path& dir) {
  if (dir.empty()) return Status::Ok();
  std::error_code ec;
  if (std::filesystem::exists(dir, ec)) return Status::Ok();
  SY_RETURN_IF_ERROR(MakeParents(dir.parent_path()));
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::IoError("cannot create folder " + dir.string() + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

// Creates an empty file with mode 0600 unless it exists. SQLite gives the -wal and -shm
// files the same mode as the database file.
Status CreateFile(const std::string& path, bool* created) {
  *created = false;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) {
    ::close(fd);
    *created = true;
    return Status::Ok();
  }
  if (errno == EEXIST) return Status::Ok();
  return Status::IoError("cannot create tuning database " + path + ": " + std::strerror(errno));
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
  for (size_t i = 0; i < differing.size(); ++i) parts += (i ? ", " : "") + differing[i];
  const std::string route = stored.route.empty() ? "(default)" : stored.route;
  return "stored result for route " + route + " (candidate " + std::to_string(stored.id) +
         ") was measured with a different " + parts + "; not reused";
}

Result<std::unique_ptr<TuningDatabase>> TuningDatabase::Open(const std::string& path,
                                                             const OpenOptions& options) {
  if (path.empty()) return Status::Invalid("tuning database path is empty");
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    if (!options.create_if_missing) return Status::NotFound("no tuning database at " + path);
    SY_RETURN_IF_ERROR(MakeParents(std::filesystem::path(path).parent_path()));
    bool created = false;
    SY_RETURN_IF_ERROR(CreateFile(path, &created));
  } else if (std::filesystem::is_directory(path, ec)) {
    return Status::Invalid("tuning database " + path + " is a folder, not a file");
  }
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr);
  // Owned from here on, even when opening failed (sqlite3 then still allocates a handle).
  std::unique_ptr<TuningDatabase> db(new TuningDatabase(raw, path));
  if (rc != SQLITE_OK) return db->Error("cannot open tuning database");
  SY_RETURN_IF_ERROR(db->Init());
  return db;
}

TuningDatabase::~TuningDatabase() { sqlite3_close_v2(db_); }

Status TuningDatabase::Error(const std::string& what) const {
  const int code = sqlite3_extended_errcode(db_);
  const std::string msg = path_ + ": " + what + ": " + sqlite3_errmsg(db_);
  if ((code & 0xff) == SQLITE_NOTADB) {
    return Status::ParseError(path_ + ": not a SQLite database (" + sqlite3_errmsg(db_) + ")");
  }
  if ((code & 0xff) == SQLITE_CORRUPT) {
    return Status::ParseError(path_ + ": database is corrupt: " + sqlite3_errmsg(db_));
  }
  return Status::IoError(msg);
}

Status TuningDatabase::Exec(const char* sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  sqlite3_free(err);
  if (rc != SQLITE_OK) return Error(std::string("statement failed"));
  return Status::Ok();
}

Status TuningDatabase::Init() {
  // Another process (a tuner child, a concurrent `db list`) may hold the write lock briefly.
  sqlite3_busy_timeout(db_, 10000);
  // The first read of the file: detects "not a database" and damaged pages before we write.
  {
    Stmt check(db_, "PRAGMA quick_check");
    std::string problems;
    int rc;
    while ((rc = check.Step()) == SQLITE_ROW) {
      const std::string line = check.Text(0);
      if (line != "ok") problems += (problems.empty() ? "" : "; ") + line;
    }
    if (rc != SQLITE_DONE) return Error("cannot read tuning database");
    if (!problems.empty()) {
      return Status::ParseError(path_ + ": database fails PRAGMA quick_check: " + problems);
    }
  }
  {
    // WAL + synchronous=FULL: a commit is on disk when Put returns, so kill -9 (or power
    // loss) loses at most the transaction in flight; readers never block the writer.
    Stmt wal(db_, "PRAGMA journal_mode=WAL");
    if (wal.Step() != SQLITE_ROW) return Error("cannot enable WAL journal mode");
    if (wal.Text(0) != "wal") {
      return Status::IoError(path_ + ": cannot enable WAL journal mode (got " + wal.Text(0) +
                             ")");
    }
  }
  SY_RETURN_IF_ERROR(Exec("PRAGMA synchronous=FULL"));

  // A SQLite file holding other tables is somebody else's database: leave it alone.
  bool has_meta = false, has_other = false;
  {
    Stmt tables(db_, "SELECT name FROM sqlite_schema WHERE type = 'table'");
    int rc;
    while ((rc = tables.Step()) == SQLITE_ROW) {
      const std::string name = tables.Text(0);
      if (name == "meta") {
        has_meta = true;
      } else if (name != "runs" && name != "candidates" && name != "sqlite_sequence") {
        has_other = true;
      }
    }
    if (rc != SQLITE_DONE) return Error("cannot list tables");
  }
  if (has_other && !has_meta) {
    return Status::Invalid(path_ + ": a SQLite database, but not a Switchyard tuning database");
  }

  Transaction tx(db_);
  if (tx.Begin() != SQLITE_OK) return Error("cannot begin transaction");
  if (has_meta) {
    Stmt get(db_, "SELECT value FROM meta WHERE name = 'schema_version'");
    const int rc = get.Step();
    if (rc != SQLITE_ROW) {
      return Status::Invalid(path_ + ": tuning database has no schema_version");
    }
    const std::string text = get.Text(0);
    int version = 0;
    try {
      version = std::stoi(text);
    } catch (...) {
      return Status::Invalid(path_ + ": schema_version '" + text + "' is not a number");
    }
    if (version > kTuningDbSchemaVersion) {
      return Status::Unsupported(path_ + ": tuning database schema version " + text +
                                 " is newer than this switchyard understands (" +
                                 std::to_string(kTuningDbSchemaVersion) +
                                 "); use a newer switchyard or another --db");
    }
    if (version < 1) {
      return Status::Invalid(path_ + ": invalid schema_version " + text);
    }
  }
  char* err = nullptr;
  if (sqlite3_exec(db_, kSchema, nullptr, nullptr, &err) != SQLITE_OK) {
    sqlite3_free(err);
    return Error("cannot create schema");
  }
  if (!has_meta) {
    Stmt put(db_, "INSERT INTO meta (name, value) VALUES ('schema_version', ?1), "
                  "('created_at', ?2)");
    put.Bind(1, std::to_string(kTuningDbSchemaVersion)).Bind(2, std::to_string(NowSeconds()));
    if (put.Step() != SQLITE_DONE) return Error("cannot write schema_version");
  }
  if (tx.Commit() != SQLITE_OK) return Error("cannot commit schema");
  return Status::Ok();
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

Result<int64_t> TuningDatabase::PutLocked(const CandidateResult& c, bool replace,
                                          bool* replaced) {
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
        path_ + ": a result for route '" + c.route + "' with this model, input profile, target " +
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
  const std::string sql = std::string("SELECT ") + kCandidateColumns +
                          " FROM candidates WHERE key = ?1";
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

Result<std::vector<CandidateResult>> TuningDatabase::ListCandidates(
    const CandidateFilter& filter) {
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
  while ((rc = s.Step()) == SQLITE_ROW) out += (out.empty() ? "" : "\n") + s.Text(0);
  if (rc != SQLITE_DONE) return Error("integrity check failed to run");
  return out;
}

}  // namespace switchyard
