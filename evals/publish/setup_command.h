// The engine's command of a run, as a reader would type it to run the same
// setup: the managed engine's server.command with its {port}, {context} and
// {slots} filled in as evalrun ran it, or, for a server started by hand, the
// card's server.launch line as given.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_PUBLISH_SETUP_COMMAND_H_
#define EVALRUN_EVALS_PUBLISH_SETUP_COMMAND_H_

#include <string>

#include <nlohmann/json.hpp>

namespace evalrun {

struct SetupCommand {
  std::string line;    // "" when the card has neither
  std::string source;  // "server.command" or "server.launch"
};

// From run.json (its "card" as given and its "slots"). A command whose
// placeholders cannot be filled (no port in base_url, no context) is shown
// as its template, each argument quoted for a POSIX shell where it needs it.
SetupCommand SetupCommandOf(const nlohmann::json& run_json);

// `arg` quoted for a POSIX shell when it holds anything but [A-Za-z0-9_./:=,+@%{}-].
std::string ShellQuoted(const std::string& arg);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_SETUP_COMMAND_H_
