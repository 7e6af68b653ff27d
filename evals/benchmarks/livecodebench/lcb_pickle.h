// LiveCodeBench's compressed private tests: the `private_test_cases` field of
// livecodebench/code_generation_lite is either a JSON string or
// base64(zlib(pickle(json string))) (LiveCodeBench/LiveCodeBench
// lcb_runner/benchmarks/code_generation.py decodes it with
// json.loads(pickle.loads(zlib.decompress(base64.b64decode(s))))). This
// decodes the second form in C++, without a Python unpickler: the pickle
// reader accepts only the opcodes that a pickled str needs and refuses every
// other opcode (no object construction, no imports, nothing executed).
//
// Errors are InvalidInput with a message that names the step (base64, zlib,
// pickle) and the byte offset. Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_BENCHMARKS_LIVECODEBENCH_LCB_PICKLE_H_
#define EVALRUN_EVALS_BENCHMARKS_LIVECODEBENCH_LCB_PICKLE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "evals/base/status.h"

namespace evalrun {

// Python's base64.b64decode(s) (validate=False): characters outside the
// alphabet A-Z a-z 0-9 + / are skipped; "=" padding ends the data; a final
// group of 1 character, or missing padding, is "Incorrect padding".
Status DecodeBase64(std::string_view text, std::string* out);

// zlib.decompress(data): a zlib stream (RFC 1950) inflated whole. More than
// max_bytes of output, a truncated or corrupt stream, or bytes after its end
// fail.
Status InflateZlib(std::string_view data, std::string* out, size_t max_bytes);

// pickle.loads(data) for a pickle that is exactly one str: protocol 2-5
// opcodes PROTO, FRAME, SHORT_BINUNICODE, BINUNICODE, BINUNICODE8, MEMOIZE,
// BINPUT, LONG_BINPUT, STOP. Any other opcode (GLOBAL, REDUCE, lists,
// numbers, protocol 0-1 text forms...), a length past the end, a stack that
// is not one str at STOP, or bytes after STOP fail, naming the opcode and
// its offset. *out gets the string's UTF-8 bytes.
Status ReadPickledStr(std::string_view data, std::string* out);

// The three steps: a compressed `private_test_cases` field to its JSON text.
// The decompressed pickle may be at most max_bytes (default 4 GiB).
Status DecodeLcbPrivateTests(std::string_view field, std::string* json_text,
                             size_t max_bytes = size_t{4} << 30);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_LIVECODEBENCH_LCB_PICKLE_H_
