// switchyard: build, tune and ship inference engines for ONNX models.
#include <iostream>
#include <new>
#include <stdexcept>

#include "commands.h"
#include "io/memory_budget.h"
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
  // Global options may also follow the verb (`switchyard build M --max-memory 4G`).
  app.fallthrough();
  app.add_option_function<std::string>(
         "--max-memory",
         [](const std::string& text) {
           auto bytes = switchyard::memory_budget::ParseSize(text);
           if (!bytes.ok()) throw CLI::ValidationError("--max-memory", bytes.status().message());
           switchyard::memory_budget::SetLimit(*bytes, "--max-memory " + text);
           // The backstop for allocations no size check covers.
           auto as = switchyard::memory_budget::LimitAddressSpace(*bytes);
           if (!as.ok()) std::cerr << "warning: " << as.status().message() << "\n";
         },
         "memory budget for this process (bytes, or with K/M/G/T, e.g. 512M, 4G): models, engines "
         "and arenas that would exceed it are refused before they are allocated")
      ->type_name("SIZE");
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
  // The verbs run inside parse(). An allocation that fails anyway (a size no check
  // covers, or RLIMIT_AS reached) ends here as a clear error, never a crash.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: " << switchyard::memory_budget::OutOfMemoryMessage() << "\n";
    return 1;
  } catch (const std::length_error& e) {
    std::cerr << "error: " << switchyard::memory_budget::OutOfMemoryMessage(std::string("a size too large (") + e.what() + ")") << "\n";
    return 1;
  }
  return exit_code;
}
