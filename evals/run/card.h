// The card: one JSON file that describes a setup (endpoint, model, engine,
// slots, sampling, thinking switch, and per-part limits and counts).
// cards/README.md documents every field; keep the two in step.
//
// LoadCard() parses and validates the whole card up front. Every error names
// the file and the JSON path, with "did you mean" for near misses. Paths in
// the card are resolved relative to the card's folder.
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
#include "evals/server/server_config.h"

namespace evalrun {

// server.slots (and each endpoint's) is 1..kMaxServerSlots or "auto"; a
// server's "auto" claim is held to the same bound (server_start.cc).
inline constexpr int kMaxServerSlots = 1024;

struct SamplingConfig {
  double temperature = 0.0;
  int top_k = 1;
  double top_p = 1.0;
  int64_t seed = 42;
};

// One part of the card: its name and its settings, read through the keys
// the part declares (evals/run/card_keys.h); the card parser rejects others.
struct PartConfig {
  std::string name;
  PartSettings settings;
};

struct LoadSamplingConfig {
  double interval_s = 10;
  double threshold_pct = 25;
  int top = 5;
  std::vector<std::string> ignore;
  bool guard = false;
  double guard_max_wait_s = 600;
};

struct HardwareConfig {
  std::optional<int> gpu_index;
  std::string gpu_uuid;
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
  SamplingConfig sampling;
  bool thinking = false;
  int max_failed = 0;          // failed requests tolerated before exit 3
  int repeat = 1;              // runs of every question part (2: an A/A pair, see evals/run/run_steps.h RunRepeat)
  LoadSamplingConfig load_sampling;
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
