#include "tests/support/capture_output.h"

#include <utility>

namespace evalrun::testing {

Captured Capture(const std::function<int(FILE* out, FILE* err)>& command) {
  FILE* out = std::tmpfile();
  FILE* err = std::tmpfile();
  Captured c;
  c.code = command(out, err);
  for (auto [f, s] : {std::pair{out, &c.out}, std::pair{err, &c.err}}) {
    std::fflush(f);
    std::rewind(f);
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s->append(buf, n);
    std::fclose(f);
  }
  return c;
}

}  // namespace evalrun::testing
