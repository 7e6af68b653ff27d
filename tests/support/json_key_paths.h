// The shape of a JSON value as a set of key paths, for the tests that hold
// the fake server's replies to the real llama-server's (the same keys, not
// the same values). Tests only.
//
//   JsonKeyPaths(json::parse(R"({"choices": [{"message": {"content": "x"}}]})"))
//   // == {"choices", "choices[].message", "choices[].message.content"}
//
// Thread-safety: pure functions.
#ifndef EVALRUN_TESTS_SUPPORT_JSON_KEY_PATHS_H_
#define EVALRUN_TESTS_SUPPORT_JSON_KEY_PATHS_H_

#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace evalrun::testing {

// Every key path of `j`, joined by ".", array elements as "[]".
std::set<std::string> JsonKeyPaths(const nlohmann::json& j);

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_JSON_KEY_PATHS_H_
