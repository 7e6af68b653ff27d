// Factories of the built-in parts (registered in evals/parts/registry.cc).
#ifndef EVALRUN_EVALS_PARTS_PARTS_H_
#define EVALRUN_EVALS_PARTS_PARTS_H_

#include <memory>

#include "evals/run/part.h"

namespace evalrun {

std::unique_ptr<Part> MakeMmluProPart();
std::unique_ptr<Part> MakeGpqaPart();
std::unique_ptr<Part> MakeIfevalPart();
std::unique_ptr<Part> MakeRulerPart();

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PARTS_PARTS_H_
