// Checking the work against the server's context before any request: a
// prompt that cannot fit the context one request can have (llama-server:
// GET /props default_generation_settings.n_ctx, the per-slot context) would
// only earn an HTTP 400, so the run stops first (exit 1) naming the length,
// the tokens needed and the server's figure, or leaves it out where the
// card says so (parts.<name>.over_context: "skip").
//
// And what each request may hold in a shared KV cache (its reservation):
// prompt tokens + max_tokens, with the exact count where the part counted
// it and an upper bound otherwise (a token covers at least one byte: the
// bytes of the messages plus the chat template's tokens).
//
// Thread-safety: pure functions over the items given.
#ifndef EVALRUN_EVALS_RUN_CONTEXT_CHECK_H_
#define EVALRUN_EVALS_RUN_CONTEXT_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/run/part.h"
#include "evals/base/status.h"

namespace evalrun {

// A part's `lengths` (prompt lengths in tokens) against the per-request
// context (`request_ctx` <= 0: unknown, nothing to check). Lengths that fit are
// kept in *kept; one that does not is an InvalidInput naming it, unless
// `skip`, when it is left out and listed in *skipped ({task: "*", length,
// reason}).
Status CheckLengths(const std::string& part, const std::vector<int64_t>& lengths, int64_t request_ctx,
                    bool skip, std::vector<int64_t>* kept, nlohmann::json* skipped);

// Every counted item's prompt + max_tokens against `request_ctx`: one that
// does not fit is an InvalidInput (naming the item, its tokens, the server's
// figure and where it came from), or with `skip` removed from *items and
// listed in *skipped.
Status CheckItemsFit(const std::string& part, int64_t request_ctx, bool skip, std::vector<Item>* items,
                     nlohmann::json* skipped);

// What a request may hold in the KV cache: counted prompt tokens (else the
// byte bound) + max_tokens.
int64_t ReserveTokens(const Item& item);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_CONTEXT_CHECK_H_
