// The server's OpenAI base URL, as a card's `server.base_url` or the
// `--base-url` flag gives it: one check for both, so that a URL the card
// would refuse is refused on the command line too (exit 1, before any
// request).
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_SERVER_BASE_URL_H_
#define EVALRUN_EVALS_SERVER_BASE_URL_H_

#include <string>

#include "evals/base/status.h"

namespace evalrun {

// Accepts http:// or https:// URLs with a host (a name, an IPv4 address or
// a bracketed IPv6 address), an optional port 1..65535 and an optional path;
// no user info, query, fragment or white space. On success *normalized is
// the URL without trailing '/'. On failure: InvalidInput whose message says
// what is wrong, without a prefix (the caller adds "cards/x.json:
// server.base_url: " or "--base-url: ").
Status CheckBaseUrl(const std::string& url, std::string* normalized);

// Whether the URL's host is this machine by name or address (localhost,
// 127.0.0.0/8, [::1]): the server then shares the machine with evalrun.
bool IsLoopbackUrl(const std::string& url);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SERVER_BASE_URL_H_
