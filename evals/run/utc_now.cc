#include "evals/run/utc_now.h"

#include "evals/base/time_text.h"

namespace evalrun {

std::string UtcNow() { return FormatUtcSeconds(UnixSecondsNow()); }

}  // namespace evalrun
