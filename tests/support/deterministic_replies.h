// A scripted model whose answer depends only on the request's messages, so
// the same question gets the same answer in every run, whatever the order,
// the concurrency or the process (shards against one run). Tests only.
#ifndef EVALRUN_TESTS_SUPPORT_DETERMINISTIC_REPLIES_H_
#define EVALRUN_TESTS_SUPPORT_DETERMINISTIC_REPLIES_H_

#include <nlohmann/json.hpp>

#include "tests/support/fake_server.h"

namespace evalrun::testing {

// From an FNV-1a hash of the messages' text: a letter A-D first (multiple
// choice), then, for one prompt in two, every 7-digit number of the prompt
// (RULER's needles), then lower- or upper-case words (IFEval); one in seven
// is cut off at its limit (finish_reason "length").
FakeReply DeterministicReply(const nlohmann::json& request);

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_DETERMINISTIC_REPLIES_H_
