// "a,b,,c" -> {"a", "b", "c"}: a comma-separated list of names as a flag
// gives it (--parts, --only, --slots), empty items dropped, nothing trimmed.
// Pure; safe on any thread.
#ifndef EVALRUN_EVALS_BASE_COMMA_LIST_H_
#define EVALRUN_EVALS_BASE_COMMA_LIST_H_

#include <string>
#include <string_view>
#include <vector>

namespace evalrun {

std::vector<std::string> SplitCommaList(std::string_view text);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_COMMA_LIST_H_
