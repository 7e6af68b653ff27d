// evalrun: quality evaluation of LLM inference servers. See README.md.
#include "evals/cli.h"

int main(int argc, char** argv) { return evalrun::RunCli(argc, argv); }
