// `switchyard report DIR -o report.html`: one self-contained HTML page (charts + tables) from
// a `switchyard tune` output folder. What it shows: docs/report.md.
#include <iostream>
#include <memory>

#include "commands.h"
#include "report/report.h"

namespace switchyard::cli {

void AddReportCommand(CLI::App& app, int* exit_code) {
  struct Args {
    std::string dir, out, db;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Write one self-contained HTML page (charts and tables, opens offline) from a "
                "`switchyard tune` output folder");
  cmd->add_option("DIR", args->dir, "tune output folder (holds record.json)")->required();
  cmd->add_option("-o,--out", args->out, "HTML file to write")->required();
  cmd->add_option("--db", args->db,
                  "tuning database (default: DIR/tuning.db, else the record's search.database)");
  cmd->callback([args, exit_code] {
    report::ReportOptions options;
    options.dir = args->dir;
    options.db_path = args->db;
    const Status s = report::WriteReport(options, args->out);
    if (!s.ok()) {
      *exit_code = ReportError(s);
      return;
    }
    std::cout << "wrote " << args->out << "\n";
    *exit_code = 0;
  });
}

}  // namespace switchyard::cli
