// What the card's `tasks` (folders of task files, relative to the card's
// folder) is handed to before its parts are read (ParseCard, card.h): the
// command line sets it, and the task files' layer (evals/tasks/
// file_benchmark.h) registers their parts. Unset: a card with `tasks` is
// refused.
//
// Thread-safety: set once on the main thread before any card is read.
#ifndef EVALRUN_EVALS_RUN_CARD_TASKS_H_
#define EVALRUN_EVALS_RUN_CARD_TASKS_H_

#include <functional>
#include <string>

#include "evals/base/status.h"

namespace evalrun {

using TaskFolderLoader = std::function<Status(const std::string& dir)>;
void SetTaskFolderLoader(TaskFolderLoader loader);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_CARD_TASKS_H_
