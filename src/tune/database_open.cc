// TuningDatabase::Open: file and folder modes, WAL + synchronous=FULL, the schema, and the
// checks that refuse foreign, damaged or newer files.
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "tune/database.h"
#include "tune/database_sqlite.h"

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

using tuning_db::NowSeconds;
using tuning_db::Stmt;
using tuning_db::Transaction;

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
      if (line == "ok") continue;
      if (!problems.empty()) problems += "; ";
      problems += line;
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
      return Status::IoError(path_ + ": cannot enable WAL journal mode (got " + wal.Text(0) + ")");
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
    Stmt put(db_,
             "INSERT INTO meta (name, value) VALUES ('schema_version', ?1), "
             "('created_at', ?2)");
    put.Bind(1, std::to_string(kTuningDbSchemaVersion)).Bind(2, std::to_string(NowSeconds()));
    if (put.Step() != SQLITE_DONE) return Error("cannot write schema_version");
  }
  if (tx.Commit() != SQLITE_OK) return Error("cannot commit schema");
  return Status::Ok();
}

}  // namespace switchyard
