// The release store on real tune folders through the real CLI (promote refusals, promote +
// rollback + audit, file modes, db purge) and in-process (a crash injected between the steps
// of a promotion leaves the store consistent; the audit API).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "io/sha256.h"
#include "release/audit.h"
#include "release/promote.h"
#include "release/store.h"
#include "test_util.h"
#include "tune/database.h"

namespace switchyard {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::TempFolder;

using Cli = testing::CliRun;

Cli RunSy(const std::string& args) { return testing::RunBinary("switchyard", args); }

json LastLine(const std::string& out) {
  const size_t last = out.find_last_of('\n', out.size() >= 2 ? out.size() - 2 : 0);
  return json::parse(out.substr(last == std::string::npos ? 0 : last + 1), nullptr, false);
}

std::vector<json> JsonLines(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(json::parse(line, nullptr, false));
  }
  return out;
}

const std::string kModel = std::string(SY_SOURCE_DIR) + "/examples/tiny_cnn/model.onnx";
const std::string kData = std::string(SY_SOURCE_DIR) + "/examples/tiny_cnn/data";
const std::string kQuick =
    " --min-rounds 4 --max-rounds 8 --confirm-rounds 20 --validate-sessions 2 --json";

// Three real tune folders, each made on first use (ctest runs every test in a process of its
// own): A and B select engines with different routes (so different files); F is a run where
// nothing passes the gate (threshold 0).
class Release : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { dir_ = new TempFolder(); }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static const Cli& Tune(const std::string& name, const std::string& extra, Cli* slot, bool* done) {
    if (!*done) {
      *done = true;
      *slot = RunSy("tune " + kModel + " --out " + (*dir_ / name) + " --data " + kData + " " + extra + kQuick);
    }
    return *slot;
  }
  static std::string A() {
    static Cli r;
    static bool done = false;
    if (Tune("tuneA", "--sweep 'threads=[1|2]'", &r, &done).code != 0) ADD_FAILURE() << r.out << r.err;
    return *dir_ / "tuneA";
  }
  static std::string B() {
    static Cli r;
    static bool done = false;
    if (Tune("tuneB", "--sweep 'threads=[1|2] memory.plan=none'", &r, &done).code != 0) {
      ADD_FAILURE() << r.out << r.err;
    }
    return *dir_ / "tuneB";
  }
  // The failing run's result is in f_result_.
  static std::string F() {
    static bool done = false;
    Tune("tuneF", "--sweep 'quant.weights=[none|int8]' --threshold 0", &f_result_, &done);
    return *dir_ / "tuneF";
  }
  static std::string ModelSha(const std::string& tune_dir = A()) {
    return json::parse(testing::ReadWholeFile(tune_dir + "/record.json"))["model"]["sha256"];
  }

  static TempFolder* dir_;
  static Cli f_result_;
};
TempFolder* Release::dir_ = nullptr;
Cli Release::f_result_;

std::vector<json> AuditEntries(const std::string& store) {
  const Cli r = RunSy("audit --store " + store + " --json");
  EXPECT_EQ(r.code, 0) << r.err;
  return JsonLines(r.out);
}

TEST_F(Release, PromoteRefusesARecordWhoseGateFailed) {
  const std::string f = F();
  ASSERT_NE(f_result_.code, 0) << "threshold 0 should let nothing pass: " << f_result_.out;
  ASSERT_TRUE(fs::exists(F() + "/record.json"));
  EXPECT_FALSE(fs::exists(F() + "/selected.engine"));
  TempFolder store;
  const Cli r = RunSy("promote " + F() + " --store " + store.path());
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("no selected engine"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(store / "models/" + ModelSha(f)));
  const std::vector<json> audit = AuditEntries(store.path());
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0]["action"], "promote");
  EXPECT_EQ(audit[0]["outcome"], "refused");
  EXPECT_EQ(audit[0]["model_sha256"], ModelSha(f));
}

TEST_F(Release, PromoteNeedsAPositiveCompareWhenRequired) {
  TempFolder store;
  Cli r = RunSy("promote " + A() + " --store " + store.path() + " --require-compare");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("no compare result"), std::string::npos) << r.err;

  // `compare --json` output: progress lines, then the object on the last line.
  const std::string hold = store / "hold.txt";
  std::ofstream(hold) << "level 1: ...\n"
                      << json{{"model_sha256", ModelSha()}, {"verdict", "hold"},
                              {"reasons", {"p95 regressed by 12% (> 5%)"}}}.dump() << "\n";
  r = RunSy("promote " + A() + " --store " + store.path() + " --require-compare --compare " + hold);
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("compare said 'hold': p95 regressed by 12%"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(store / "models/" + ModelSha() + "/current"));

  const std::string other = store / "other.json";
  std::ofstream(other) << json{{"model_sha256", std::string(64, 'c')}, {"verdict", "promote"}}.dump();
  r = RunSy("promote " + A() + " --store " + store.path() + " --compare " + other);
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("about another model"), std::string::npos) << r.err;

  const std::string yes = store / "promote.json";
  std::ofstream(yes) << json{{"model_sha256", ModelSha()}, {"verdict", "promote"}, {"reasons", json::array()}}.dump();
  r = RunSy("promote " + A() + " --store " + store.path() + " --require-compare --compare " + yes + " --json");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(LastLine(r.out)["version"], 1);
  const std::string v1 = store / "models/" + ModelSha() + "/versions/1";
  EXPECT_EQ(testing::ReadWholeFile(v1 + "/compare.json"), testing::ReadWholeFile(yes));
  const json promo = json::parse(testing::ReadWholeFile(v1 + "/promotion.json"));
  EXPECT_EQ(promo["compare"]["verdict"], "promote");
  EXPECT_EQ(promo["engine_file_sha256"], *Sha256File(A() + "/selected.engine"));
  // The scope statement travels with the promotion.
  // (the record's own "scope" when the tuner wrote one, else derived in the same shape).
  EXPECT_EQ(promo["scope"]["covered"]["input_sets"].size(), 2u) << promo["scope"].dump();
  EXPECT_FALSE(promo["scope"]["not_covered"].empty());
  const std::vector<json> audit = AuditEntries(store.path());
  ASSERT_EQ(audit.size(), 4u);
  EXPECT_EQ(audit[0]["outcome"], "refused");
  EXPECT_EQ(audit[1]["outcome"], "refused");
  EXPECT_EQ(audit[2]["outcome"], "refused");
  EXPECT_EQ(audit[3]["outcome"], "promoted");
}

TEST_F(Release, PromoteRefusesATamperedEngine) {
  TempFolder work;
  const std::string copy = work / "tune";
  fs::copy(A(), copy);
  {
    std::fstream f(copy + "/selected.engine", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x5a');
  }
  const Cli r = RunSy("promote " + copy + " --store " + (work / "store"));
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("engine hash mismatch"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(work / "store/models/" + ModelSha()));
}

void ExpectOwnerOnly(const std::string& root) {
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    struct stat st {};
    ASSERT_EQ(::stat(e.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, e.is_directory() ? 0700u : 0600u) << e.path();
  }
}

TEST_F(Release, PromoteTwiceRollBackAndTheAuditLogShowsEverything) {
  TempFolder work;
  const std::string store = work / "store";
  Cli r = RunSy("promote " + A() + " --store " + store);
  ASSERT_EQ(r.code, 0) << r.err;
  r = RunSy("promote " + B() + " --store " + store + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(LastLine(r.out)["version"], 2);
  EXPECT_EQ(LastLine(r.out)["replaced"], 1);

  r = RunSy("status --store " + store + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  json st = LastLine(r.out)["models"][0];
  EXPECT_EQ(st["in_service"]["version"], 2);
  EXPECT_EQ(st["replaced"]["version"], 1);
  const json rec_b = json::parse(testing::ReadWholeFile(B() + "/record.json"));
  EXPECT_EQ(st["in_service"]["summary"]["route"], rec_b["selected"]["route"]);
  EXPECT_EQ(st["in_service"]["summary"]["speedup"], rec_b["selected"]["speedup"]);
  EXPECT_EQ(st["in_service"]["engine_file_sha256"], *Sha256File(B() + "/selected.engine"));

  r = RunSy("rollback --store " + store);
  ASSERT_EQ(r.code, 0) << r.err;
  r = RunSy("status --store " + store + " --json");
  st = LastLine(r.out)["models"][0];
  EXPECT_EQ(st["in_service"]["version"], 1);
  EXPECT_EQ(st["in_service"]["by"], "rollback");
  EXPECT_EQ(st["replaced"]["version"], 2);
  EXPECT_EQ(st["versions"].size(), 2u);  // nothing deleted
  EXPECT_EQ(st["history_events"], 3);
  const std::string model_dir = store + "/models/" + ModelSha();
  EXPECT_EQ(*Sha256File(model_dir + "/versions/1/engine"), *Sha256File(A() + "/selected.engine"));
  EXPECT_TRUE(fs::exists(model_dir + "/versions/2/engine"));
  // Text status names the version, the route and what it replaced.
  r = RunSy("status --store " + store);
  EXPECT_NE(r.out.find("in service: version 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("replaced: version 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not covered:"), std::string::npos) << r.out;

  // Nothing older than version 1 was ever in service; --to rolls forward.
  r = RunSy("rollback --store " + store);
  EXPECT_EQ(r.code, 3);
  r = RunSy("rollback --store " + store + " --to 2 --model " + ModelSha());
  EXPECT_EQ(r.code, 0) << r.err;
  r = RunSy("rollback --store " + store + " --to 7");
  EXPECT_EQ(r.code, 1);

  const std::vector<json> audit = AuditEntries(store);
  std::vector<std::string> seen;
  for (const json& e : audit) seen.push_back(e["action"].get<std::string>() + ":" + e["outcome"].get<std::string>());
  EXPECT_EQ(seen, (std::vector<std::string>{"promote:promoted", "promote:promoted", "rollback:rolled_back",
                                            "rollback:refused", "rollback:rolled_back", "rollback:error"}));
  for (const json& e : audit) {
    EXPECT_FALSE(e["who"].get<std::string>().empty());
    EXPECT_FALSE(e["host"].get<std::string>().empty());
    EXPECT_EQ(e["when"].get<std::string>().size(), 20u) << e["when"];  // 2026-11-29T19:31:09Z
    EXPECT_EQ(e["tool"]["name"], "switchyard");
    EXPECT_NE(e["command"].get<std::string>().find(store), std::string::npos);
  }
  EXPECT_EQ(audit[1]["executed"]["version"], 2);
  EXPECT_EQ(audit[1]["data_sha256"]["input_profile"], rec_b["data"]["input_profile"]);
  EXPECT_EQ(audit[2]["executed"], (json{{"version", 1}, {"replaced", 2}}));
  ExpectOwnerOnly(store);
}

// A hand-edited or damaged pointer or history line with a field of the wrong type is a clear
// error naming the file and the field, with the store left as it was (status and rollback
// ended in std::terminate on "replaced": null or "version": "1").
TEST_F(Release, AMalformedPointerOrHistoryFieldIsAnErrorNamingItNeverACrash) {
  TempFolder work;
  const std::string store = work / "store";
  ASSERT_EQ(RunSy("promote " + A() + " --store " + store).code, 0);
  const std::string model_dir = store + "/models/" + ModelSha();
  const std::string current = model_dir + "/current", history = model_dir + "/history.jsonl";
  const std::string good_current = testing::ReadWholeFile(current), good_history = testing::ReadWholeFile(history);
  auto damage = [](const std::string& path, const std::string& text) { std::ofstream(path, std::ios::trunc) << text; };

  json cur = json::parse(good_current);
  cur["replaced"] = nullptr;
  damage(current, cur.dump() + "\n");
  for (const std::string verb : {"status", "rollback"}) {
    const Cli r = RunSy(verb + " --store " + store);
    EXPECT_EQ(r.code, 1) << verb << ": " << r.err;
    EXPECT_NE(r.err.find(current), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("'replaced' must be an integer"), std::string::npos) << r.err;
  }
  EXPECT_EQ(testing::ReadWholeFile(current), cur.dump() + "\n");  // nothing rewritten
  damage(current, good_current);

  json line = json::parse(good_history.substr(0, good_history.find('\n')));
  line["version"] = "1";
  damage(history, line.dump() + "\n");
  for (const std::string verb : {"status", "rollback"}) {
    const Cli r = RunSy(verb + " --store " + store);
    EXPECT_EQ(r.code, 1) << verb << ": " << r.err;
    EXPECT_NE(r.err.find(history + ":1: field 'version' must be an integer"), std::string::npos) << r.err;
  }
  EXPECT_EQ(testing::ReadWholeFile(history), line.dump() + "\n");
  damage(history, good_history);
  EXPECT_EQ(RunSy("status --store " + store).code, 0);
}

TEST_F(Release, ACrashBetweenPromotionStepsLeavesTheStoreConsistent) {
  for (const char* step : {release::kStepStaged, release::kStepVersionWritten,
                           release::kStepPointerFlipped}) {
    SCOPED_TRACE(step);
    TempFolder work;
    const std::string store = work / "store";
    release::PromoteRequest req;
    req.tune_dir = A();
    ASSERT_TRUE(release::Promote(store, req).ok());
    req.tune_dir = B();
    req.step_hook = [&](const std::string& s) {
      return s == step ? Status::Internal("simulated crash after " + s) : Status::Ok();
    };
    auto crashed = release::Promote(store, req);
    ASSERT_FALSE(crashed.ok());
    EXPECT_NE(crashed.status().message().find("simulated crash"), std::string::npos);

    auto st = release::StoreStatus(store);
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    const json& m = (*st)["models"][0];
    const bool flipped = std::string(step) == release::kStepPointerFlipped;
    // Before the pointer flip the old version serves; after it the new one, complete.
    EXPECT_EQ(m["in_service"]["version"], flipped ? 2 : 1);
    const std::string served = flipped ? B() : A();
    EXPECT_EQ(*Sha256File(m["in_service"]["engine"].get<std::string>()),
              *Sha256File(served + "/selected.engine"));
    EXPECT_EQ(m["in_service"]["engine_file_sha256"], *Sha256File(served + "/selected.engine"));

    req.step_hook = nullptr;
    auto again = release::Promote(store, req);
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_TRUE(again->done) << again->reason;
    st = release::StoreStatus(store);
    const json& m2 = (*st)["models"][0];
    EXPECT_EQ(*Sha256File(m2["in_service"]["engine"].get<std::string>()), *Sha256File(B() + "/selected.engine"));
    // The history ends with the event in service (a skipped line is restored), and rollback
    // goes to A's version 1, never to a version that did not serve.
    release::ReleaseStore rs(store);
    auto history = rs.History(ModelSha());
    ASSERT_TRUE(history.ok());
    EXPECT_EQ(history->back()["version"], m2["in_service"]["version"]);
    auto rb = release::Rollback(store, {});
    ASSERT_TRUE(rb.ok()) << rb.status().ToString();
    EXPECT_TRUE(rb->done) << rb->reason;
    EXPECT_EQ(rb->version, 1);
    // No staging folder survives a successful promotion.
    for (const auto& e : fs::directory_iterator(rs.VersionsDir(ModelSha()))) {
      EXPECT_EQ(e.path().filename().string().find(".staging"), std::string::npos) << e.path();
    }
  }
}

TEST_F(Release, ScopeIsTheRecordsOwnOrDerivedFromItsFields) {
  json rec = json::parse(testing::ReadWholeFile(A() + "/record.json"));
  rec.erase("scope");
  const json derived = release::DescribeScope(rec);
  EXPECT_EQ(derived["derived"], true);
  const json& cov = derived["covered"];
  ASSERT_EQ(cov["input_sets"].size(), 2u) << derived.dump();
  EXPECT_EQ(cov["input_sets"][1]["shapes"]["input"], json::array({2, 3, 32, 32}));
  EXPECT_EQ(cov["validated_concurrent_sessions"], 2);  // --validate-sessions 2
  EXPECT_EQ(cov["measured_concurrency"], 1);
  EXPECT_EQ(cov["target"], rec["target"]["fingerprint"]);
  EXPECT_NE(cov["edge_shapes"].get<std::string>().find("skipped"), std::string::npos);
  EXPECT_EQ(derived["not_covered"].size(), 4u);
  rec["scope"] = {{"covered", {{"x", 1}}}, {"not_covered", {"y"}}};
  const json own = release::DescribeScope(rec);
  EXPECT_EQ(own["derived"], false);
  EXPECT_EQ(own["covered"]["x"], 1);
}

TEST(ReleaseAudit, AppendsOwnerOnlyLinesAndReportsMalformedOnesByLineNumber) {
  TempFolder dir;
  const std::string log = dir / "sub/audit.jsonl";
  json e = release::AuditBase("tune", "switchyard tune m.onnx --out x");
  e["outcome"] = "finished";
  ASSERT_TRUE(release::AppendAudit(log, e).ok());
  ASSERT_TRUE(release::AppendAudit(log, {{"action", "compare"}, {"outcome", "hold"}}).ok());
  EXPECT_FALSE(release::AppendAudit(log, json::array()).ok());
  struct stat st {};
  ASSERT_EQ(::stat(log.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((dir / "sub").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  {
    std::ofstream f(log, std::ios::app);
    f << "{not json\n[1,2]\n";
  }
  ASSERT_TRUE(release::AppendAudit(log, {{"action", "promote"}}).ok());
  auto read = release::ReadAudit(log);
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->entries.size(), 3u);
  EXPECT_EQ(read->entries[0].value["command"], "switchyard tune m.onnx --out x");
  EXPECT_EQ(read->entries[1].value["tool"]["name"], "switchyard");  // base fields filled in
  EXPECT_EQ(read->entries[2].line, 5);
  ASSERT_EQ(read->errors.size(), 2u);
  EXPECT_NE(read->errors[0].find("audit.jsonl:3:"), std::string::npos) << read->errors[0];
  EXPECT_NE(read->errors[1].find("audit.jsonl:4:"), std::string::npos) << read->errors[1];

  const Cli r = RunSy("audit --log " + log);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("3 entries"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("compare"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("audit.jsonl:3:"), std::string::npos) << r.err;
}

CandidateResult Row(const std::string& model, const std::string& route, int64_t created_at, int64_t run) {
  CandidateResult c;
  c.key = {model, "profile", "cpu|x", "0.1.0"};
  c.route = route;
  c.status = "passed";
  c.created_at = created_at;
  c.run_id = run;
  return c;
}

TEST(ReleasePurge, RemovesOldOrOneModelsRowsAndLeavesAnAuditLine) {
  TempFolder dir;
  const std::string path = dir / "t/tuning.db";
  const std::string m1(64, 'a'), m2(64, 'b');
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  {
    auto db = TuningDatabase::Open(path);
    ASSERT_TRUE(db.ok());
    const int64_t run = *(*db)->BeginRun({{m1, "profile", "cpu|x", "0.1.0"}, "tune"});
    ASSERT_TRUE((*db)->Put(Row(m1, "", now - 40 * 86400, run)).ok());
    ASSERT_TRUE((*db)->Put(Row(m1, "threads=1", now - 40 * 86400, run)).ok());
    ASSERT_TRUE((*db)->Put(Row(m1, "threads=2", now - 60, 0)).ok());
    ASSERT_TRUE((*db)->Put(Row(m2, "", now - 60, 0)).ok());
    EXPECT_FALSE((*db)->Purge(0, "").ok());  // no filter: refused
  }
  Cli r = RunSy("db purge --db " + path + " --older-than 30d");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("purged 2 candidates"), std::string::npos) << r.out;
  {
    auto db = TuningDatabase::Open(path, {false});
    auto rows = (*db)->ListCandidates();
    ASSERT_EQ(rows->size(), 2u);
    EXPECT_EQ((*rows)[0].route, "threads=2");
    EXPECT_EQ((*db)->ListRuns()->size(), 1u);  // the run is younger than 30 days: kept
  }
  r = RunSy("db purge --db " + path + " --model " + m1 + " --audit " + (dir / "purge-audit.jsonl"));
  ASSERT_EQ(r.code, 0) << r.err;
  {
    auto db = TuningDatabase::Open(path, {false});
    auto rows = (*db)->ListCandidates();
    ASSERT_EQ(rows->size(), 1u);
    EXPECT_EQ((*rows)[0].key.model_sha256, m2);
    EXPECT_TRUE((*db)->ListRuns()->empty());  // m1's run has no candidates left
    EXPECT_EQ(*(*db)->IntegrityCheck(), "ok");
  }
  auto first = release::ReadAudit(dir / "t/audit.jsonl");  // default: beside the database
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->entries.size(), 1u);
  EXPECT_EQ(first->entries[0].value["action"], "db purge");
  EXPECT_EQ(first->entries[0].value["executed"]["candidates_deleted"], 2);
  EXPECT_EQ(first->entries[0].value["executed"]["models"], json::array({m1}));
  auto second = release::ReadAudit(dir / "purge-audit.jsonl");
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->entries.size(), 1u);
  EXPECT_EQ(second->entries[0].value["model_sha256"], m1);
  EXPECT_EQ(second->entries[0].value["executed"]["runs_deleted"], 1);
  r = RunSy("db purge --db " + path);
  EXPECT_EQ(r.code, 1);
  r = RunSy("db purge --db " + path + " --older-than 3x");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--older-than"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace switchyard
