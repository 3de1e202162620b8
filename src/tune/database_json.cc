// TuningDatabase's JSON-lines export and import (format: docs/tuning-db.md).
#include <istream>
#include <ostream>

#include "tune/database.h"

namespace switchyard {
namespace {

// The fields of one JSON line, with the JSON type each must have.
enum class Kind { kString, kInt, kIntOrNull, kNumber, kObject };
struct Field {
  const char* name;
  Kind kind;
  bool required;
};
constexpr Field kFields[] = {
    {"id", Kind::kInt, false},
    {"run_id", Kind::kIntOrNull, false},
    {"key", Kind::kString, false},
    {"model_sha256", Kind::kString, true},
    {"input_profile", Kind::kString, true},
    {"target_fingerprint", Kind::kString, true},
    {"tool_version", Kind::kString, true},
    {"route", Kind::kString, true},
    {"engine_sha256", Kind::kString, false},
    {"status", Kind::kString, true},
    {"error", Kind::kString, false},
    {"accuracy", Kind::kObject, false},
    {"measurement", Kind::kObject, false},
    {"build_s", Kind::kNumber, false},
    {"accuracy_s", Kind::kNumber, false},
    {"measure_s", Kind::kNumber, false},
    {"created_at", Kind::kInt, false},
};

bool HasKind(const nlohmann::json& v, Kind kind) {
  switch (kind) {
    case Kind::kString:
      return v.is_string();
    case Kind::kInt:
      return v.is_number_integer();
    case Kind::kIntOrNull:
      return v.is_null() || v.is_number_integer();
    case Kind::kNumber:
      return v.is_number();
    case Kind::kObject:
      return v.is_object();
  }
  return false;
}

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kString:
      return "a string";
    case Kind::kInt:
      return "an integer";
    case Kind::kIntOrNull:
      return "an integer or null";
    case Kind::kNumber:
      return "a number";
    case Kind::kObject:
      return "an object";
  }
  return "?";
}

std::string Str(const nlohmann::json& j, const char* name) {
  return j.contains(name) ? j.at(name).get<std::string>() : std::string();
}
double Num(const nlohmann::json& j, const char* name) {
  return j.contains(name) ? j.at(name).get<double>() : 0.0;
}

}  // namespace

nlohmann::ordered_json CandidateToJson(const CandidateResult& c) {
  nlohmann::ordered_json j;
  j["id"] = c.id;
  j["run_id"] = c.run_id > 0 ? nlohmann::ordered_json(c.run_id) : nlohmann::ordered_json();
  j["key"] = c.Key();
  j["model_sha256"] = c.key.model_sha256;
  j["input_profile"] = c.key.input_profile;
  j["target_fingerprint"] = c.key.target_fingerprint;
  j["tool_version"] = c.key.tool_version;
  j["route"] = c.route;
  j["engine_sha256"] = c.engine_sha256;
  j["status"] = c.status;
  j["error"] = c.error;
  j["accuracy"] = c.accuracy;
  j["measurement"] = c.measurement;
  j["build_s"] = c.build_s;
  j["accuracy_s"] = c.accuracy_s;
  j["measure_s"] = c.measure_s;
  j["created_at"] = c.created_at;
  return j;
}

Result<CandidateResult> CandidateFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::Invalid("expected a JSON object");
  for (const auto& [name, value] : j.items()) {
    bool known = false;
    for (const Field& f : kFields) known = known || name == f.name;
    if (!known) return Status::Invalid("unknown field '" + name + "'");
  }
  for (const Field& f : kFields) {
    if (!j.contains(f.name)) {
      if (f.required) return Status::Invalid(std::string("missing field '") + f.name + "'");
      continue;
    }
    if (!HasKind(j.at(f.name), f.kind)) {
      return Status::Invalid(std::string("field '") + f.name + "' must be " + KindName(f.kind));
    }
  }
  CandidateResult c;
  c.id = j.value("id", int64_t{0});
  c.run_id = j.contains("run_id") && !j.at("run_id").is_null() ? j.at("run_id").get<int64_t>() : 0;
  c.key = {Str(j, "model_sha256"), Str(j, "input_profile"), Str(j, "target_fingerprint"),
           Str(j, "tool_version")};
  c.route = Str(j, "route");
  c.engine_sha256 = Str(j, "engine_sha256");
  c.status = Str(j, "status");
  c.error = Str(j, "error");
  if (j.contains("accuracy")) c.accuracy = j.at("accuracy");
  if (j.contains("measurement")) c.measurement = j.at("measurement");
  c.build_s = Num(j, "build_s");
  c.accuracy_s = Num(j, "accuracy_s");
  c.measure_s = Num(j, "measure_s");
  c.created_at = j.value("created_at", int64_t{0});
  for (const char* name : {"model_sha256", "input_profile", "target_fingerprint", "tool_version"}) {
    if (Str(j, name).empty()) return Status::Invalid(std::string("field '") + name + "' is empty");
  }
  if (!IsCandidateStatus(c.status)) {
    return Status::Invalid("unknown status '" + c.status +
                           "' (passed|rejected_accuracy|build_failed|crashed|timeout|duplicate)");
  }
  if (j.contains("key") && j.at("key").get<std::string>() != c.Key()) {
    return Status::Invalid("field 'key' does not match the key parts and route (expected '" +
                           c.Key() + "')");
  }
  return c;
}

Status TuningDatabase::ExportJsonLines(std::ostream& out) {
  SY_ASSIGN_OR_RETURN(const std::vector<CandidateResult> rows, ListCandidates());
  for (const CandidateResult& c : rows) out << CandidateToJson(c).dump() << "\n";
  out.flush();
  if (!out) return Status::IoError("cannot write the export of " + path_);
  return Status::Ok();
}

Result<ImportStats> TuningDatabase::ImportJsonLines(std::istream& in, const std::string& source,
                                                    bool replace) {
  // Parse and validate everything before touching the database.
  std::vector<std::pair<int64_t, CandidateResult>> rows;
  std::string line;
  int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const std::string where = source + ":" + std::to_string(line_no) + ": ";
    const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return Status::ParseError(where + "not a valid JSON object");
    auto c = CandidateFromJson(j);
    if (!c.ok()) return Status(c.status().code(), where + c.status().message());
    // Runs are not exported: an imported row belongs to no local run; ids are local too.
    c->id = 0;
    c->run_id = 0;
    rows.emplace_back(line_no, std::move(*c));
  }
  if (in.bad()) return Status::IoError(source + ": read error");

  SY_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  ImportStats stats;
  for (const auto& [no, c] : rows) {
    bool replaced = false;
    auto id = PutLocked(c, replace, &replaced);
    if (!id.ok()) {
      (void)Exec("ROLLBACK");
      return Status(id.status().code(), source + ":" + std::to_string(no) + ": " +
                                            id.status().message() + "; nothing was imported");
    }
    ++(replaced ? stats.replaced : stats.inserted);
  }
  if (Status s = Exec("COMMIT"); !s.ok()) {
    (void)Exec("ROLLBACK");
    return s;
  }
  return stats;
}

}  // namespace switchyard
