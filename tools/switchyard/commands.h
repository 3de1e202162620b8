// The `switchyard` verbs. Each Add*Command registers a CLI11 subcommand whose callback
// stores an exit code in *exit_code: 0 success, 1 error (message on stderr).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "switchyard/status.h"

namespace switchyard::cli {

void AddInspectCommand(CLI::App& app, int* exit_code);
void AddRunCommand(CLI::App& app, int* exit_code);
void AddRoutesCommand(CLI::App& app, int* exit_code);
void AddBuildCommand(CLI::App& app, int* exit_code);
void AddBenchCommand(CLI::App& app, int* exit_code);
void AddDbCommand(CLI::App& app, int* exit_code);
void AddCompareCommand(CLI::App& app, int* exit_code);  // and hidden __compare_memory; docs/compare.md
void AddCheckCommand(CLI::App& app, int* exit_code);    // docs/compare.md
void AddReportCommand(CLI::App& app, int* exit_code);  // docs/report.md
// `promote`, `rollback`, `status`, `audit` (docs/release-store.md); command_line is audited.
void AddReleaseCommands(CLI::App& app, int* exit_code, const std::string& command_line);
// `tune` and the hidden `__worker`; command_line is recorded in the release record.
void AddTuneCommand(CLI::App& app, int* exit_code, const std::string& command_line);

// Prints "error: <message>" to stderr and returns 1.
int ReportError(const Status& s);

}  // namespace switchyard::cli
