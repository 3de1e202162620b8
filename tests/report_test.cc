// `switchyard report`: a page generated from a real tune run is self-contained (no external
// reference), renders all four charts with marks in headless Chromium without console errors,
// and escapes hostile strings from the record; bad input fails cleanly and writes nothing.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "build/target.h"
#include "report/report.h"
#include "report/report_assets.h"

namespace {

namespace fs = std::filesystem;
namespace report = switchyard::report;
const std::string kBin = SY_BINARY_DIR "/bin/switchyard";

std::string ReadAll(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct ShellResult {
  int code = -1;
  std::string out;
};
// Runs a shell command, stdout and stderr together.
ShellResult Shell(const std::string& cmd) {
  ShellResult r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string ChromiumPath() {
  for (const char* c : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (fs::exists(c)) return c;
  return "";
}

// The page's text outside <script> elements (the inlined libraries mention URLs in code).
std::string WithoutScripts(const std::string& html) {
  std::string out;
  size_t pos = 0;
  for (;;) {
    const size_t open = html.find("<script", pos);
    if (open == std::string::npos) break;
    const size_t close = html.find("</script>", open);
    out += html.substr(pos, open - pos);
    if (close == std::string::npos) return out;
    pos = close + 9;
  }
  return out + html.substr(pos);
}

// No attribute, style or element of the page can load anything from elsewhere.
void ExpectSelfContained(const std::string& html, const std::string& what) {
  const std::string outside = WithoutScripts(html);
  static const std::regex kExternalAttr(
      "\\b(src|href|srcset|action|poster|data)\\s*=\\s*[\"']?\\s*(https?:|//|file:|ftp:)",
      std::regex::icase);
  std::smatch m;
  EXPECT_FALSE(std::regex_search(outside, m, kExternalAttr)) << what << ": " << m.str();
  static const std::regex kLoaders("<(link|iframe|img|object|embed|base)\\b|<script[^>]*\\bsrc\\s*=|"
                                   "@import|url\\(\\s*[\"']?(https?:|//)",
                                   std::regex::icase);
  EXPECT_FALSE(std::regex_search(outside, m, kLoaders)) << what << ": " << m.str();
  static const std::regex kScriptSrc("<script[^>]*\\bsrc\\s*=", std::regex::icase);
  EXPECT_FALSE(std::regex_search(html, m, kScriptSrc)) << what << ": " << m.str();
  EXPECT_EQ(html.find("sourceMappingURL"), std::string::npos) << what;
}

class ReportTest : public ::testing::Test {
 protected:
  // Four routes with rounding-changing candidates where the CPU has them (bf16, Winograd
  // need AVX-512), else four fp32 kernel choices.
  static std::string Sweep() {
    const switchyard::CpuFeatures f = switchyard::Target::HostCpu().features;
    return f.HasBf16() && f.avx512f ? "precision=[fp32|bf16] kernel.conv=[auto|winograd] threads=1"
                                    : "kernel.conv=[auto|direct] kernel.gemm=[auto|native] threads=1";
  }
  // One real tune run for the whole suite (the tuner takes a few seconds).
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() /
                        ("sy_report_test_" + std::to_string(::getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    const std::string src = SY_SOURCE_DIR;
    tune_ = new ShellResult(Shell(
        "timeout 300 " + kBin + " tune " + src + "/examples/tiny_cnn/model.onnx --out " +
        (*dir_ / "tune").string() + " --data " + src + "/examples/tiny_cnn/data" +
        " --sweep '" + Sweep() + "'"
        " --min-rounds 4 --max-rounds 8 --confirm-rounds 20 --validate-sessions 2"));
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    delete tune_;
  }
  void SetUp() override {
    if (report::kReportAssetCount == 0)
      GTEST_SKIP() << "chart libraries not embedded at build time (run scripts/setup.sh, then "
                      "configure and build again)";
    ASSERT_TRUE(fs::exists(*dir_ / "tune" / "record.json")) << tune_->out;
  }

  // Renders `html` in headless Chromium; returns the DOM after scripts ran, and stderr.
  struct Rendered {
    std::string dom, log;
  };
  Rendered Render(const fs::path& html) {
    const fs::path err = html.string() + ".stderr";
    const std::string cmd =
        "timeout 120 " + ChromiumPath() +
        " --headless=new --no-sandbox --disable-gpu --no-first-run --disable-extensions"
        " --host-resolver-rules='MAP * ~NOTFOUND' --user-data-dir=" +
        (*dir_ / "chrome-profile").string() +
        " --virtual-time-budget=10000 --enable-logging=stderr --v=0 --dump-dom 'file://" +
        html.string() + "' 2>" + err.string();
    Rendered r;
    r.dom = Shell(cmd).out;
    r.log = ReadAll(err);
    return r;
  }

  // Every chart element rendered an SVG with data marks; no console error or failed load.
  void ExpectChartsRendered(const Rendered& r) {
    for (const char* chart : {"pareto", "knobs", "latency", "progress"}) {
      const std::regex re(std::string("data-sy-chart=\"") + chart + "\"[^>]*>");
      std::smatch m;
      ASSERT_TRUE(std::regex_search(r.dom, m, re)) << chart << "\n" << r.log.substr(0, 3000);
      const std::string tag = m.str();
      EXPECT_EQ(tag.find("data-sy-error"), std::string::npos) << tag;
      std::smatch marks;
      ASSERT_TRUE(std::regex_search(tag, marks, std::regex("data-sy-marks=\"([0-9]+)\"")))
          << chart << " did not render: " << tag << "\n" << r.log.substr(0, 3000);
      EXPECT_GT(std::stoi(marks[1].str()), 0) << chart;
      EXPECT_NE(r.dom.find("<svg", m.position()), std::string::npos) << chart;
    }
    EXPECT_NE(r.dom.find("data-sy-done=\"4\""), std::string::npos) << "not all charts settled";
    EXPECT_NE(r.dom.find("data-sy-errors=\"0\""), std::string::npos);
    std::istringstream lines(r.log);
    // Chromium logs every console message as "INFO:CONSOLE(...)" whatever its level, and the
    // page logs nothing when all is well (Vega at level Warn): any console line is a failure.
    for (std::string line; std::getline(lines, line);) {
      EXPECT_EQ(line.find(":CONSOLE"), std::string::npos) << line;
      EXPECT_EQ(line.find("Uncaught"), std::string::npos) << line;
      EXPECT_EQ(line.find("net::ERR_"), std::string::npos) << line;
    }
  }

  static fs::path* dir_;
  static ShellResult* tune_;
};
fs::path* ReportTest::dir_ = nullptr;
ShellResult* ReportTest::tune_ = nullptr;

TEST_F(ReportTest, RealTuneRunRendersAllChartsOffline) {
  const fs::path out = *dir_ / "report.html";
  const ShellResult r = Shell(kBin + " report " + (*dir_ / "tune").string() + " -o " + out.string());
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string html = ReadAll(out);
  ExpectSelfContained(html, "report.html");
  // The tables carry the record: every candidate's route, the decision and the model hash.
  const auto record = nlohmann::json::parse(ReadAll(*dir_ / "tune" / "record.json"));
  EXPECT_NE(html.find(report::HtmlEscape(record["decision"]["reason"].get<std::string>())),
            std::string::npos);
  EXPECT_NE(html.find(record["model"]["sha256"].get<std::string>()), std::string::npos);
  for (const auto& c : record["candidates"]) {
    const std::string route = c["route"];
    if (!route.empty()) {
      EXPECT_NE(html.find(report::HtmlEscape(route)), std::string::npos) << route;
    }
  }

  if (ChromiumPath().empty())
    GTEST_SKIP() << "chromium is not installed (scripts/setup.sh installs it): the page was "
                    "checked for external references but not rendered";
  const Rendered rendered = Render(out);
  ExpectChartsRendered(rendered);
  ExpectSelfContained(rendered.dom, "rendered DOM");
}

TEST_F(ReportTest, HostileStringsFromTheRecordAreEscaped) {
  // A copy of the record whose route and error texts try to end the script element and
  // inject markup; no database, so the page also shows the record-only fallback.
  auto record = nlohmann::json::parse(ReadAll(*dir_ / "tune" / "record.json"));
  const std::string evil = "</script><script>window.pwned=1</script><b id=\"x\">&amp;'\"\u2028";
  for (auto& c : record["candidates"]) c["error"] = evil;
  record["candidates"].back()["route"] = "precision=bf16 x=" + evil;
  record["decision"]["reason"] = evil;
  record["model"]["path"] = evil;
  record["search"]["database"] = "";
  const fs::path dir = *dir_ / "hostile";
  fs::create_directories(dir);
  std::ofstream(dir / "record.json") << record.dump();
  const fs::path out = *dir_ / "hostile.html";
  const ShellResult r = Shell(kBin + " report " + dir.string() + " -o " + out.string());
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string html = ReadAll(out);
  EXPECT_EQ(html.find("<script>window.pwned"), std::string::npos);
  EXPECT_EQ(html.find("<b id=\"x\">"), std::string::npos);
  EXPECT_NE(html.find("&lt;/script&gt;&lt;script&gt;window.pwned=1"), std::string::npos);
  EXPECT_NE(html.find("\\u003c/script\\u003e"), std::string::npos);  // inside the JSON block
  EXPECT_NE(html.find("no tuning database found"), std::string::npos);
  ExpectSelfContained(html, "hostile.html");
  if (ChromiumPath().empty()) GTEST_SKIP() << "chromium is not installed (scripts/setup.sh)";
  const Rendered rendered = Render(out);
  ExpectChartsRendered(rendered);
  EXPECT_EQ(rendered.dom.find("<b id=\"x\">"), std::string::npos);
}

// A record whose field has the wrong type (a route that is a number) reaches a read the
// report does not check: the CLI's backstop makes it a clear error with exit 1 and no page,
// where it ended in std::terminate (SIGABRT, a core dump) before.
TEST_F(ReportTest, AWronglyTypedRecordFieldIsAnErrorNotACrash) {
  auto record = nlohmann::json::parse(ReadAll(*dir_ / "tune" / "record.json"));
  record["selected"]["route"] = 5;
  const fs::path dir = *dir_ / "wrong_type";
  fs::create_directories(dir);
  std::ofstream(dir / "record.json") << record.dump();
  const fs::path out = *dir_ / "wrong_type.html";
  const ShellResult r = Shell(kBin + " report " + dir.string() + " -o " + out.string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("error: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("must be string"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("terminate called"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));
}

TEST(ReportEscaping, HtmlAndScriptJson) {
  EXPECT_EQ(report::HtmlEscape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
  const nlohmann::json j = {{"s", "</script><!--&\u2028"}};
  const std::string s = report::JsonForScript(j);
  EXPECT_EQ(s.find('<'), std::string::npos);
  EXPECT_EQ(s.find('>'), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(s), j);  // the escapes decode to the same value
}

TEST(ReportCli, MissingRecordIsAClearErrorAndWritesNothing) {
  const fs::path dir = fs::temp_directory_path() / ("sy_report_bad_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "report.html";
  ShellResult r = Shell(kBin + " report " + dir.string() + " -o " + out.string());
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("record.json not found"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));
  // Not a release record, and not JSON at all.
  std::ofstream(dir / "record.json") << "{\"format\": \"something else\"}";
  r = Shell(kBin + " report " + dir.string() + " -o " + out.string());
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("not a switchyard release record"), std::string::npos) << r.out;
  std::ofstream(dir / "record.json") << "{ truncated";
  r = Shell(kBin + " report " + dir.string() + " -o " + out.string());
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("is not a JSON object"), std::string::npos) << r.out;
  // A folder that does not exist, and a --db that does not exist.
  r = Shell(kBin + " report " + (dir / "nope").string() + " -o " + out.string());
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("does not exist"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));
  fs::remove_all(dir);
}

}  // namespace
