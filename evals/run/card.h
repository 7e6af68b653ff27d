// The card: one JSON file that describes a setup (endpoint, model, engine,
// slots, sampling, thinking switch, and per-part limits and counts).
// cards/README.md documents every field; keep the two in step.
//
// LoadCard() parses and validates the whole card up front. Every error names
// the file and the JSON path, with "did you mean" for near misses. Paths in
// the card are resolved relative to the card's folder.
//
// Thread-safety: parsing runs on one thread; a parsed Card is a plain value,
// read by every thread of the run.
#ifndef EVALRUN_EVALS_RUN_CARD_H_
#define EVALRUN_EVALS_RUN_CARD_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"
#include "evals/run/card_keys.h"
#include "evals/run/request_settings.h"
#include "evals/server/server_config.h"

namespace evalrun {

// server.slots (and each endpoint's) is 1..kMaxServerSlots or "auto"; a
// server's "auto" claim is held to the same bound (server_start.cc).
inline constexpr int kMaxServerSlots = 1024;

// One part of the card: its name and its settings, read through the keys
// the part declares (evals/run/card_keys.h); the card parser rejects others.
struct PartConfig {
  std::string name;
  PartSettings settings;
  RequestSettings request;  // the card's top-level values, overridden by parts.<name>
};

struct LoadSamplingConfig {
  double interval_s = 10;
  double threshold_pct = 25;
  int top = 5;
  std::vector<std::string> ignore;
  bool guard = false;
  double guard_max_wait_s = 600;
  // The port the engine's processes listen on, where the card's base_url
  // reaches them through a proxy on this machine; 0: the base_url's port.
  int engine_port = 0;
};

struct HardwareConfig {
  std::optional<int> gpu_index;
  std::string gpu_uuid;
};

// How the scoring stage runs (evals/run/scoring_stage.h): `scoring` in the
// card. concurrency 0: one scorer, niced when the engine shares the machine.
struct ScoringConfig {
  int concurrency = 0;
  std::optional<int> nice;  // unset: 10 when the server is on this machine, else 0
};

struct Card {
  std::string path;            // as given
  std::string dir;             // its folder (relative paths resolve here)
  std::string text;            // the bytes as read (copied into run.json)
  std::string sha256;

  std::string name;
  nlohmann::json model = nlohmann::json::object();
  nlohmann::json engine = nlohmann::json::object();
  nlohmann::json hardware_raw = nlohmann::json::object();
  HardwareConfig hardware;
  ServerConfig server;
  RequestSettings request;     // sampling, thinking, reasoning_budget, cache_prompt: the parts' defaults
  int max_failed = 0;          // failed requests tolerated before exit 3
  int repeat = 1;              // runs of every question part (2: an A/A pair, see evals/run/run_steps.h RunRepeat)
  LoadSamplingConfig load_sampling;
  ScoringConfig scoring;
  std::vector<PartConfig> parts;  // in card order

  const PartConfig* FindPart(const std::string& name) const;
};

// Parses and validates. `source` names the card in messages. Each part is
// read against its registered definition (evals/run/part_registry.h).
Status ParseCard(std::string_view text, const std::string& source, Card* card);
// Reads the file, then ParseCard.
Status LoadCard(const std::string& path, Card* card);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_CARD_H_
