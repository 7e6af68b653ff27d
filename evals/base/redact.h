// One redaction for every text evalrun writes: the API key never reaches
// the disk (nor stdout/stderr through the messages that quote a server).
//
// RegisterSecret is called once per key read (ResolveJob, from the card's
// api_key_env); Redact then replaces, in any text:
//   - each registered key, as is and as JSON escapes it, by "[redacted]";
//   - the value after "--api-key" / "--api-key=" (another process's command
//     line, as load.jsonl records it), after "Bearer " and after
//     "Authorization:" / "X-Api-Key:" / "api-key:" (request headers a server
//     quoted back in an error), whatever key it is.
// A value ends at whitespace, a quote, a backslash, ',' or ';'. load.jsonl
// and the errors the client records go through it; the run files
// (WriteFileAtomically, JsonlAppender) through RedactSecrets below.
//
// Thread-safe: RegisterSecret takes a lock; Redact reads a snapshot.
#ifndef EVALRUN_EVALS_BASE_REDACT_H_
#define EVALRUN_EVALS_BASE_REDACT_H_

#include <string>
#include <string_view>

#include "evals/base/status.h"

namespace evalrun {

inline constexpr char kRedacted[] = "[redacted]";

// Adds `secret` (ignored when empty) to what Redact removes, for the rest
// of the process.
void RegisterSecret(const std::string& secret);

std::string Redact(std::string_view text);

// The registered keys alone (as is and JSON-escaped), not the patterns: for
// the run files, whose lines hold model answers that may well say "Bearer
// " + token in code they write (samples.jsonl, answers.jsonl), and must be
// kept as the server gave them. What quotes a server or another process
// (errors, load.jsonl) goes through Redact.
std::string RedactSecrets(std::string_view text);

// Ok, or InvalidInput "<field>: the environment variable <env> ..." when
// the key holds a control character (CR or LF would add headers to every
// request; a trailing newline, as `export KEY=$(cat file)` keeps it, is
// named as such) or a byte a header cannot carry.
Status CheckApiKey(const std::string& key, const std::string& field, const std::string& env);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_REDACT_H_
