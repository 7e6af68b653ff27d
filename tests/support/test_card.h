// Cards for the tests that run evalrun against the fake server
// (fake_server.h): one builder with the defaults those tests share, which a
// test changes in place, and one writer. Tests only.
//
//   nlohmann::json card = TestCard(server.base_url(), {{"mmlupro", {{"questions", 3}}}});
//   card["server"]["retries"] = 0;
//   BinaryResult r = Run({"--card", WriteCardFile(dir_ + "/card.json", card)});
//
// A test about a card's raw text (malformed JSON, a duplicate key, a number
// no double holds, nesting past the bound) writes that text itself and says
// so; every other card starts here.
//
// Pure functions (WriteCardFile writes one file); thread-safe.
#ifndef EVALRUN_TESTS_SUPPORT_TEST_CARD_H_
#define EVALRUN_TESTS_SUPPORT_TEST_CARD_H_

#include <string>

#include <nlohmann/json.hpp>

namespace evalrun::testing {

// The card the end-to-end tests run:
//   {"name": "e2e", "model": {"name": "fake"},
//    "server": {"base_url": <base_url>, "slots": 2, "ready_timeout_s": 20,
//               "request_timeout_base_s": 30},
//    "sampling": {"temperature": 0, "top_k": 1, "seed": 42},
//    "thinking": false,
//    "parts": <parts>}
// Greedy and seeded, thinking off, a timeout that a loaded machine meets.
nlohmann::json TestCard(const std::string& base_url, const nlohmann::json& parts = nlohmann::json::object());

// What a card cannot go without, for the tests of a card's checks (where a
// default could hide the field under test):
//   {"name": "e2e", "server": {"base_url": <base_url>}, "parts": <parts>}
nlohmann::json BareCard(const std::string& base_url, const nlohmann::json& parts = nlohmann::json::object());

// Writes card.dump(2) to `path` (replacing it; the folder must exist) and
// returns `path`.
std::string WriteCardFile(const std::string& path, const nlohmann::json& card);

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_TEST_CARD_H_
