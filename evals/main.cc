// evalrun: quality evaluation of LLM inference servers. See README.md.
#include "evals/base/malloc_tuning.h"
#include "evals/cli.h"

int main(int argc, char** argv) {
  evalrun::TuneMalloc();
  return evalrun::RunCli(argc, argv);
}
