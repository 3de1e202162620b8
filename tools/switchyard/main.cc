// switchyard: build, tune and ship inference engines for ONNX models.
#include <iostream>

#include "commands.h"
#include "switchyard/version.h"

namespace switchyard::cli {

int ReportError(const Status& s) {
  std::cerr << "error: " << s.ToString() << "\n";
  return 1;
}

}  // namespace switchyard::cli

int main(int argc, char** argv) {
  CLI::App app{"Switchyard: build, tune and ship inference engines for ONNX models"};
  app.set_version_flag("--version", std::string("switchyard ") + SWITCHYARD_VERSION + " (" +
                                        SWITCHYARD_GIT_COMMIT + ")");
  app.require_subcommand(1);
  int exit_code = 0;
  switchyard::cli::AddInspectCommand(app, &exit_code);
  switchyard::cli::AddRunCommand(app, &exit_code);
  switchyard::cli::AddRoutesCommand(app, &exit_code);
  switchyard::cli::AddBuildCommand(app, &exit_code);
  switchyard::cli::AddBenchCommand(app, &exit_code);
  switchyard::cli::AddDbCommand(app, &exit_code);
  switchyard::cli::AddCompareCommand(app, &exit_code);
  switchyard::cli::AddCheckCommand(app, &exit_code);
  switchyard::cli::AddReportCommand(app, &exit_code);
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
  switchyard::cli::AddTuneCommand(app, &exit_code, command_line);
  switchyard::cli::AddReleaseCommands(app, &exit_code, command_line);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return exit_code;
}
