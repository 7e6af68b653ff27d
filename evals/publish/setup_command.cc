#include "evals/publish/setup_command.h"

#include <vector>

#include "evals/server/engine.h"

namespace evalrun {
namespace {

using nlohmann::json;

std::string Str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// "scheme://host[:port]" of a base URL ("" when it has no scheme).
std::string OriginOf(const std::string& base_url) {
  const size_t scheme = base_url.find("://");
  if (scheme == std::string::npos) return "";
  return base_url.substr(0, base_url.find('/', scheme + 3));
}

// The template's argv with its placeholders filled where run.json has the
// values, else the template itself.
std::vector<std::string> ManagedArgv(const json& server, const json& run_json) {
  std::vector<std::string> templ;
  for (const auto& a : server["command"])
    if (a.is_string()) templ.push_back(a.get<std::string>());
  int port = 0;
  const int64_t context = server.value("context", json(0)).is_number_integer() ? server["context"].get<int64_t>() : 0;
  const int slots = run_json.value("slots", json(0)).is_number_integer() ? run_json["slots"].get<int>() : 0;
  std::vector<std::string> argv;
  if (OriginPort(OriginOf(Str(server, "base_url")), &port).ok() && context > 0 && slots > 0 &&
      ExpandCommand(templ, port, context, slots, &argv).ok())
    return argv;
  return templ;
}

}  // namespace

std::string ShellQuoted(const std::string& arg) {
  static const std::string kPlain =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=,+@%{}-";
  if (!arg.empty() && arg.find_first_not_of(kPlain) == std::string::npos) return arg;
  std::string q = "'";
  for (char c : arg) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

SetupCommand SetupCommandOf(const json& run_json) {
  SetupCommand out;
  if (!run_json.is_object() || !run_json.contains("card") || !run_json["card"].is_object()) return out;
  const json& server = run_json["card"].value("server", json());
  if (!server.is_object()) return out;
  if (server.contains("command") && server["command"].is_array() && !server["command"].empty()) {
    for (const std::string& a : ManagedArgv(server, run_json))
      out.line += (out.line.empty() ? "" : " ") + ShellQuoted(a);
    out.source = "server.command";
  } else if (!Str(server, "launch").empty()) {
    out.line = Str(server, "launch");
    out.source = "server.launch";
  }
  return out;
}

}  // namespace evalrun
