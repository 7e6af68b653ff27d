// The part a task file runs (file_benchmark.h): its definition (name,
// display name, kind, card keys: questions, max_tokens, seed, prompt,
// extract) and its factory, from the TaskSpec.
//
// Thread-safety: Prepare on one thread; Score from any thread afterwards.
#ifndef EVALRUN_EVALS_TASKS_FILE_PART_H_
#define EVALRUN_EVALS_TASKS_FILE_PART_H_

#include <memory>

#include "evals/run/part_registry.h"
#include "evals/tasks/task_file.h"

namespace evalrun {

PartDefinition FilePartDefinition(std::shared_ptr<const TaskSpec> spec);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_TASKS_FILE_PART_H_
