// Tuning database: schema, file modes, key/reuse rule, duplicates, JSON-lines round trip,
// refusal of foreign files, and durability when a writer is killed with SIGKILL.
#include "tune/database.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

namespace switchyard {
namespace {

namespace fs = std::filesystem;

class DatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "sy_db_test_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string Path(const std::string& name) const { return (fs::path(dir_) / name).string(); }

  std::unique_ptr<TuningDatabase> OpenOk(const std::string& path) {
    auto db = TuningDatabase::Open(path);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return db.ok() ? std::move(*db) : nullptr;
  }

  std::string dir_;
};

CandidateKey Key() {
  return {"a1b2c3", "profile-1", "cpu|AMD EPYC 9R14|avx2,avx512f", "0.1.0+abc"};
}

CandidateResult Candidate(const std::string& route, double p50 = 1.5) {
  CandidateResult c;
  c.key = Key();
  c.route = route;
  c.engine_sha256 = "ffee" + std::to_string(route.size()) + "0123456789abcdef";
  c.status = "passed";
  c.accuracy = {{"logits", {{"l2", 1.25e-7}, {"threshold", 1e-3}}}};
  c.measurement = {{"p50_ms", p50},
                   {"p95_ms", p50 * 1.2},
                   {"p99_ms", p50 * 1.3},
                   {"mean_ms", p50 * 1.05},
                   {"throughput_per_s", 1000.0 / p50},
                   {"peak_memory_bytes", 123456789},
                   {"n", 40}};
  c.build_s = 0.75;
  c.accuracy_s = 0.125;
  c.measure_s = 2.5;
  return c;
}

void ExpectSameContent(const CandidateResult& a, const CandidateResult& b) {
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.route, b.route);
  EXPECT_EQ(a.engine_sha256, b.engine_sha256);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.accuracy, b.accuracy);
  EXPECT_EQ(a.measurement, b.measurement);
  EXPECT_DOUBLE_EQ(a.build_s, b.build_s);
  EXPECT_DOUBLE_EQ(a.accuracy_s, b.accuracy_s);
  EXPECT_DOUBLE_EQ(a.measure_s, b.measure_s);
  EXPECT_EQ(a.created_at, b.created_at);
}

TEST_F(DatabaseTest, CreatesSchemaWithPrivateModesAndReopens) {
  const std::string path = Path("new/sub/tuning.db");
  {
    auto db = OpenOk(path);
    ASSERT_TRUE(db);
    auto check = db->IntegrityCheck();
    ASSERT_TRUE(check.ok()) << check.status().ToString();
    EXPECT_EQ(*check, "ok");
    ASSERT_TRUE(db->Put(Candidate("fuse.conv_act=off")).ok());
  }
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(Path("new/sub").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(Path("new").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  // The file is WAL with synchronous=FULL and carries schema_version 1.
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "PRAGMA journal_mode", -1, &s, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)), "wal");
  sqlite3_finalize(s);
  ASSERT_EQ(sqlite3_prepare_v2(raw, "SELECT value FROM meta WHERE name='schema_version'", -1, &s,
                               nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)), "1");
  sqlite3_finalize(s);
  sqlite3_close(raw);

  auto db = OpenOk(path);
  ASSERT_TRUE(db);
  auto rows = db->ListCandidates();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].route, "fuse.conv_act=off");
}

TEST_F(DatabaseTest, MissingFileIsNotCreatedWhenAskedNotTo) {
  auto db = TuningDatabase::Open(Path("absent.db"), {.create_if_missing = false});
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(fs::exists(Path("absent.db")));
}

TEST_F(DatabaseTest, PutFindRoundTripAndRuns) {
  auto db = OpenOk(Path("t.db"));
  ASSERT_TRUE(db);
  auto run = db->BeginRun({Key(), "switchyard tune m.onnx --out o"});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  CandidateResult c = Candidate("precision=bf16");
  c.run_id = *run;
  c.created_at = 1700000000;
  auto id = db->Put(c);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_GT(*id, 0);

  auto found = db->Find(Key(), "precision=bf16");
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  ASSERT_TRUE(found->has_value());
  ExpectSameContent(**found, c);
  EXPECT_EQ((*found)->id, *id);
  EXPECT_EQ((*found)->run_id, *run);
  EXPECT_DOUBLE_EQ((*found)->measurement.at("p50_ms").get<double>(), 1.5);

  // The default route is the empty string and is a route like any other.
  auto none = db->Find(Key(), "");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  CandidateResult failed = Candidate("");
  failed.status = "build_failed";
  failed.error = "kernel.conv=winograd: no Winograd for 1x1";
  failed.measurement = nlohmann::json::object();
  ASSERT_TRUE(db->Put(failed).ok());
  auto def = db->Find(Key(), "");
  ASSERT_TRUE(def.ok() && def->has_value());
  EXPECT_EQ((*def)->status, "build_failed");
  EXPECT_EQ((*def)->error, failed.error);
  EXPECT_EQ((*def)->run_id, 0);
  EXPECT_GT((*def)->created_at, 1700000000);  // 0 in Put means now

  ASSERT_TRUE(db->FinishRun(*run, "finished").ok());
  EXPECT_FALSE(db->FinishRun(*run + 100, "finished").ok());
  auto runs = db->ListRuns();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].status, "finished");
  EXPECT_EQ((*runs)[0].info.key, Key());
  EXPECT_GT((*runs)[0].finished_at, 0);

  CandidateFilter only_passed;
  only_passed.status = "passed";
  auto passed = db->ListCandidates(only_passed);
  ASSERT_TRUE(passed.ok());
  ASSERT_EQ(passed->size(), 1u);
  EXPECT_EQ((*passed)[0].route, "precision=bf16");
}

TEST_F(DatabaseTest, InvalidCandidatesAreRefused) {
  auto db = OpenOk(Path("t.db"));
  ASSERT_TRUE(db);
  CandidateResult c = Candidate("x=1");
  c.status = "great";
  EXPECT_EQ(db->Put(c).status().code(), StatusCode::kInvalidArgument);
  c = Candidate("x=1");
  c.key.tool_version = "";
  EXPECT_EQ(db->Put(c).status().code(), StatusCode::kInvalidArgument);
  c = Candidate("x=1");
  c.measurement = 3;
  EXPECT_EQ(db->Put(c).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(db->ListCandidates()->empty());
}

TEST_F(DatabaseTest, KeyMismatchIsNotReusedButReported) {
  auto db = OpenOk(Path("t.db"));
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->Put(Candidate("precision=bf16")).ok());
  CandidateKey other_target = Key();
  other_target.target_fingerprint = "cpu|Intel Xeon|avx2";
  CandidateKey other_tool = Key();
  other_tool.tool_version = "0.2.0+def";
  CandidateKey other_both = other_target;
  other_both.tool_version = "0.2.0+def";
  CandidateKey other_data = Key();
  other_data.input_profile = "profile-2";

  for (const CandidateKey& k : {other_target, other_tool, other_both, other_data}) {
    auto found = db->Find(k, "precision=bf16");
    ASSERT_TRUE(found.ok());
    EXPECT_FALSE(found->has_value()) << "reused across a key mismatch";
  }
  auto m = db->FindMismatches(other_target, "precision=bf16");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->size(), 1u);
  EXPECT_EQ((*m)[0].differing, std::vector<std::string>{"target_fingerprint"});
  EXPECT_EQ((*m)[0].stored.key, Key());
  EXPECT_NE((*m)[0].Describe().find("not reused"), std::string::npos);
  EXPECT_NE((*m)[0].Describe().find("target_fingerprint"), std::string::npos);

  m = db->FindMismatches(other_both, "precision=bf16");
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->size(), 1u);
  EXPECT_EQ((*m)[0].differing, (std::vector<std::string>{"target_fingerprint", "tool_version"}));

  // The matching key and another route report nothing.
  EXPECT_TRUE(db->FindMismatches(Key(), "precision=bf16")->empty());
  EXPECT_TRUE(db->FindMismatches(other_target, "precision=fp32")->empty());

  // Storing the mismatched key is a new row; both coexist, nothing is overwritten.
  CandidateResult there = Candidate("precision=bf16", 9.0);
  there.key = other_target;
  ASSERT_TRUE(db->Put(there).ok());
  EXPECT_DOUBLE_EQ((*db->Find(Key(), "precision=bf16"))->measurement["p50_ms"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ((*db->Find(other_target, "precision=bf16"))->measurement["p50_ms"].get<double>(),
                   9.0);
}

TEST_F(DatabaseTest, KeyEncodingIsUnambiguous) {
  CandidateResult a = Candidate("r");
  CandidateResult b = Candidate("r");
  a.key.target_fingerprint = "x|y";
  a.key.tool_version = "z";
  b.key.target_fingerprint = "x";
  b.key.tool_version = "y|z";
  EXPECT_NE(a.Key(), b.Key());
  auto db = OpenOk(Path("t.db"));
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->Put(a).ok());
  ASSERT_TRUE(db->Put(b).ok());
}

TEST_F(DatabaseTest, DuplicateKeyRefusedUnlessReplace) {
  auto db = OpenOk(Path("t.db"));
  ASSERT_TRUE(db);
  auto first = db->Put(Candidate("fuse.gelu=off", 2.0));
  ASSERT_TRUE(first.ok());
  auto again = db->Put(Candidate("fuse.gelu=off", 3.0));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(again.status().message().find("already stored"), std::string::npos);
  EXPECT_DOUBLE_EQ((*db->Find(Key(), "fuse.gelu=off"))->measurement["p50_ms"].get<double>(), 2.0);

  auto replaced = db->Put(Candidate("fuse.gelu=off", 3.0), /*replace=*/true);
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  EXPECT_EQ(*replaced, *first);  // updated in place
  EXPECT_DOUBLE_EQ((*db->Find(Key(), "fuse.gelu=off"))->measurement["p50_ms"].get<double>(), 3.0);
  EXPECT_EQ(db->ListCandidates()->size(), 1u);
}

TEST_F(DatabaseTest, ExportImportReproducesRows) {
  auto src = OpenOk(Path("src.db"));
  ASSERT_TRUE(src);
  const std::vector<std::string> routes = {"", "precision=bf16", "kernel.conv=winograd",
                                           "fuse.conv_act=off precision=bf16"};
  for (size_t i = 0; i < routes.size(); ++i) {
    CandidateResult c = Candidate(routes[i], 1.0 + static_cast<double>(i));
    c.created_at = 1700000000 + static_cast<int64_t>(i);
    if (i == 2) {
      c.status = "rejected_accuracy";
      c.error = "output \"logits\": l2 3.1e-2 > threshold 1e-3";
    }
    ASSERT_TRUE(src->Put(c).ok());
  }
  std::stringstream lines;
  ASSERT_TRUE(src->ExportJsonLines(lines).ok());
  const std::string text = lines.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4);
  // Keys of each line are the column names.
  const auto first = nlohmann::json::parse(text.substr(0, text.find('\n')));
  for (const char* col :
       {"id", "run_id", "key", "model_sha256", "input_profile", "target_fingerprint",
        "tool_version", "route", "engine_sha256", "status", "error", "accuracy", "measurement",
        "build_s", "accuracy_s", "measure_s", "created_at"}) {
    EXPECT_TRUE(first.contains(col)) << col;
  }

  auto dst = OpenOk(Path("dst.db"));
  ASSERT_TRUE(dst);
  auto stats = dst->ImportJsonLines(lines, "export.jsonl");
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->inserted, 4);
  auto a = src->ListCandidates();
  auto b = dst->ListCandidates();
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), b->size());
  for (size_t i = 0; i < a->size(); ++i) ExpectSameContent((*a)[i], (*b)[i]);

  // Importing the same file again: every row is a duplicate; with replace they are updated.
  std::stringstream again(text);
  auto dup = dst->ImportJsonLines(again, "export.jsonl");
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("export.jsonl:1:"), std::string::npos)
      << dup.status().message();
  std::stringstream again2(text);
  auto rep = dst->ImportJsonLines(again2, "export.jsonl", /*replace=*/true);
  ASSERT_TRUE(rep.ok()) << rep.status().ToString();
  EXPECT_EQ(rep->replaced, 4);
  EXPECT_EQ(dst->ListCandidates()->size(), 4u);
}

TEST_F(DatabaseTest, MalformedImportRefusedWithLineNumberAndImportsNothing) {
  auto src = OpenOk(Path("src.db"));
  ASSERT_TRUE(src);
  ASSERT_TRUE(src->Put(Candidate("a=1")).ok());
  ASSERT_TRUE(src->Put(Candidate("a=2")).ok());
  std::stringstream lines;
  ASSERT_TRUE(src->ExportJsonLines(lines).ok());
  const std::string good = lines.str();

  struct Case {
    std::string third_line;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"{not json", "not a valid JSON object"},
      {R"({"model_sha256":"m","input_profile":"p","target_fingerprint":"t",)"
       R"("tool_version":"v","route":"r","status":"fast"})",
       "unknown status 'fast'"},
      {R"({"model_sha256":"m","input_profile":"p","target_fingerprint":"t",)"
       R"("tool_version":"v","status":"passed"})",
       "missing field 'route'"},
      {R"({"model_sha256":"m","input_profile":"p","target_fingerprint":"t",)"
       R"("tool_version":"v","route":"r","status":"passed","build_s":"slow"})",
       "field 'build_s' must be a number"},
      {R"({"model_sha256":"m","input_profile":"p","target_fingerprint":"t",)"
       R"("tool_version":"v","route":"r","status":"passed","colour":"red"})",
       "unknown field 'colour'"},
      {R"({"model_sha256":"m","input_profile":"p","target_fingerprint":"t",)"
       R"("tool_version":"v","route":"r","status":"passed","key":"m|p|t|v|other"})",
       "field 'key' does not match"},
      // A repeat of line 1 inside the same file is a duplicate.
      {good.substr(0, good.find('\n')), "already stored"},
  };
  for (const Case& c : cases) {
    auto dst = OpenOk(Path("dst.db"));
    ASSERT_TRUE(dst);
    std::stringstream in(good + "\n" + c.third_line + "\n");  // blank line 3, bad line 4
    auto r = dst->ImportJsonLines(in, "in.jsonl");
    ASSERT_FALSE(r.ok()) << c.third_line;
    EXPECT_NE(r.status().message().find("in.jsonl:4: "), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos) << r.status().message();
    EXPECT_TRUE(dst->ListCandidates()->empty()) << "a failed import left rows behind";
  }
}

TEST_F(DatabaseTest, ForeignFilesAreRefusedNamingTheFile) {
  const std::string text = Path("notes.db");
  std::ofstream(text) << "this is a text file, long enough to have a header of 100 bytes "
                         "which SQLite checks for its magic string 'SQLite format 3'.\n";
  auto r = TuningDatabase::Open(text);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(text), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("not a SQLite database"), std::string::npos)
      << r.status().message();

  // A real SQLite database of somebody else.
  const std::string other = Path("other.db");
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(other.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE photos (id INTEGER)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  r = TuningDatabase::Open(other);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not a Switchyard tuning database"), std::string::npos);

  // A newer schema version.
  const std::string newer = Path("newer.db");
  ASSERT_TRUE(OpenOk(newer));
  ASSERT_EQ(sqlite3_open(newer.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "UPDATE meta SET value='7' WHERE name='schema_version'", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  r = TuningDatabase::Open(newer);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(r.status().message().find("schema version 7"), std::string::npos);
  EXPECT_NE(r.status().message().find(newer), std::string::npos);
}

TEST_F(DatabaseTest, CorruptPagesFailQuickCheck) {
  const std::string path = Path("corrupt.db");
  {
    auto db = OpenOk(path);
    ASSERT_TRUE(db);
    for (int i = 0; i < 200; ++i) {
      CandidateResult c = Candidate("r=" + std::to_string(i));
      c.error = std::string(200, 'x');
      ASSERT_TRUE(db->Put(c).ok());
    }
  }
  // Fold the WAL into the main file, then scribble over a page in the middle.
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  const auto size = fs::file_size(path);
  ASSERT_GT(size, 8u * 4096u);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(4 * 4096));
    const std::string junk(4096, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  auto r = TuningDatabase::Open(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().message();
}

// A child process stores candidates in a loop and reports each committed one through a pipe;
// the parent kills it with SIGKILL at a random point. Everything reported must survive.
TEST_F(DatabaseTest, SurvivesSigkillOfAWriter) {
  const std::string path = Path("kill.db");
  ASSERT_TRUE(OpenOk(path));  // schema exists before the first child starts
  std::set<int64_t> committed;
  std::srand(12345);
  for (int round = 0; round < 6; ++round) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      auto db = TuningDatabase::Open(path);
      if (!db.ok()) ::_exit(2);
      for (int64_t i = 0;; ++i) {
        const int64_t n = round * 1000000 + i;
        CandidateResult c = Candidate("round" + std::to_string(round) + ".i=" + std::to_string(i));
        c.measurement["n"] = n;
        if (!(*db)->Put(c).ok()) ::_exit(3);
        if (::write(fds[1], &n, sizeof n) != sizeof n) ::_exit(4);
      }
    }
    ::close(fds[1]);
    const int want = 5 + std::rand() % 40;
    int got = 0;
    int64_t n = 0;
    while (got < want && ::read(fds[0], &n, sizeof n) == sizeof n) {
      committed.insert(n);
      ++got;
    }
    ::kill(pid, SIGKILL);
    // Drain what the child reported before it died.
    while (::read(fds[0], &n, sizeof n) == sizeof n) committed.insert(n);
    ::close(fds[0]);
    int wstatus = 0;
    ASSERT_EQ(::waitpid(pid, &wstatus, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(wstatus)) << "child exited early with " << WEXITSTATUS(wstatus);
    EXPECT_EQ(WTERMSIG(wstatus), SIGKILL);
    ASSERT_EQ(got, want);
  }
  auto db = OpenOk(path);
  ASSERT_TRUE(db);
  auto check = db->IntegrityCheck();
  ASSERT_TRUE(check.ok());
  EXPECT_EQ(*check, "ok");
  auto rows = db->ListCandidates();
  ASSERT_TRUE(rows.ok());
  std::set<int64_t> stored;
  for (const CandidateResult& c : *rows) stored.insert(c.measurement.at("n").get<int64_t>());
  for (int64_t n : committed) EXPECT_TRUE(stored.count(n)) << "lost committed candidate " << n;
  EXPECT_GE(stored.size(), committed.size());
  // At most the one in flight per kill was stored without being reported.
  EXPECT_LE(stored.size(), committed.size() + 6);
}

// The CLI: import (file and line in errors, exit 1), list, export -o (mode 0600), round trip.
class DbCliTest : public DatabaseTest {
 protected:
  struct Out {
    int code = -1;
    std::string out, err;
  };
  Out Run(const std::string& args) {
    const std::string out = Path("stdout.txt"), err = Path("stderr.txt");
    const std::string cmd = std::string("timeout 60 '") + SY_BINARY_DIR + "/bin/switchyard' " +
                            args + " >'" + out + "' 2>'" + err + "'";
    const int status = std::system(cmd.c_str());
    Out r;
    if (status != -1 && WIFEXITED(status)) r.code = WEXITSTATUS(status);
    r.out = Slurp(out);
    r.err = Slurp(err);
    return r;
  }
  static std::string Slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
  void SetUp() override {
    if (!fs::exists(SY_BINARY_DIR "/bin/switchyard")) GTEST_SKIP() << "switchyard not built";
    DatabaseTest::SetUp();
  }
};

TEST_F(DbCliTest, ImportListExport) {
  {
    auto db = OpenOk(Path("src.db"));
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->Put(Candidate("", 2.5)).ok());
    CandidateResult bad = Candidate("precision=bf16");
    bad.status = "rejected_accuracy";
    bad.engine_sha256 = "";
    bad.measurement = nlohmann::json::object();
    ASSERT_TRUE(db->Put(bad).ok());
  }
  Out r = Run("db export --db '" + Path("src.db") + "' -o '" + Path("x.jsonl") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::stat(Path("x.jsonl").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  r = Run("db import --db '" + Path("dst.db") + "' '" + Path("x.jsonl") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("imported 2 new"), std::string::npos) << r.out;
  r = Run("db list --db '" + Path("dst.db") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("(default)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2.500"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rejected_accuracy"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ffee0012345"), std::string::npos) << r.out;  // engine sha prefix
  r = Run("db list --json --db '" + Path("dst.db") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2);
  EXPECT_EQ(nlohmann::json::parse(r.out.substr(0, r.out.find('\n')))["route"], "");

  // A duplicate import, then a malformed line: exit 1, file and line named, nothing added.
  r = Run("db import --db '" + Path("dst.db") + "' '" + Path("x.jsonl") + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("x.jsonl:1:"), std::string::npos) << r.err;
  std::ofstream(Path("bad.jsonl")) << Slurp(Path("x.jsonl")) << "{\"route\": 3}\n";
  r = Run("db import --db '" + Path("fresh.db") + "' '" + Path("bad.jsonl") + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("bad.jsonl:3:"), std::string::npos) << r.err;
  EXPECT_TRUE(OpenOk(Path("fresh.db"))->ListCandidates()->empty());

  // Read-only verbs do not create a database.
  r = Run("db list --db '" + Path("none.db") + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("none.db"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(Path("none.db")));
}

}  // namespace
}  // namespace switchyard
