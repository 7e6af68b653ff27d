// A task file: a benchmark written as JSON instead of C++ (docs/tasks.md).
// The raw JSON is read here, once, into a typed TaskSpec; everything after
// (evals/tasks/file_benchmark.h) reads the spec. Every error names the file
// and the key ("tasks/x.json: answer.kind: unknown kind \"nubmer\" (did you
// mean \"number\"?)"); an unknown key gets "did you mean" among the keys of
// its object; a regex that does not compile names its key and RE2's words;
// a placeholder that names no field is caught when the rows are read
// (file_benchmark.h names the file and line).
//
// Thread-safety: parsing is a pure function; a TaskSpec is a plain value.
#ifndef EVALRUN_EVALS_TASKS_TASK_FILE_H_
#define EVALRUN_EVALS_TASKS_TASK_FILE_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "evals/base/status.h"
#include "scorers/answer_extract.h"

namespace evalrun {

// Where rows come from: a file beside the task file (JSONL or CSV with a
// header, by its extension; `sha256` pins it when given), or a file of the
// data dir listed in a dataset manifest (`dataset`: checked by the
// manifest's sha256, fetched by `evalrun datasets fetch`).
struct TaskSource {
  std::string file;     // resolved path of a local file ("" when `dataset`)
  std::string shown;    // as the task file wrote it (results.json info.dataset.file)
  std::string dataset;  // "<dataset>/<file>" in the data dir
  std::string sha256;   // pin of a local file ("" : not pinned)
};

struct TaskFewshot {
  TaskSource source;
  int count = 0;               // shots per question
  bool same_category = false;  // the first `count` rows of the question's category
  std::string answer;          // the assistant turn's template
};

// One prompt profile: messages as templates with {field} placeholders
// ({options}: the lettered options; {last_letter}: the last option's
// letter; {{ and }} are braces).
struct TaskPrompt {
  std::string system;
  std::string user;
  int max_tokens = 1024;
  std::vector<std::string> stop;  // the request's stop strings (none: not sent)
};

enum class AnswerKind { kChoice, kNumber, kExact, kRegex };

// One extraction profile of the answer.
struct TaskExtract {
  std::string chain;               // choice: a named letter chain ("" : the regex chain)
  std::vector<RegexStep> regexes;  // choice (no chain), exact and regex: the chain
  NumberFrom number_from = NumberFrom::kLast;
  std::string marker;              // number: after this marker
};

struct TaskSpec {
  std::string path;  // the task file, for messages
  std::string name, title, about;
  TaskSource data;
  std::string id_field;        // "" : the row number
  std::string category_field;  // "" : no categories
  std::vector<std::string> drop_options;  // choice: options removed before lettering ("N/A")
  std::string option_format = "{letter}. {option}\n";
  TaskFewshot fewshot;
  std::map<std::string, TaskPrompt> prompts;  // by profile name
  std::string default_prompt;
  AnswerKind kind = AnswerKind::kChoice;
  std::string gold_field;
  std::string options_field;  // choice: the field with the list of options
  std::string gold_extract;   // number: read the gold with the number rule too ("extract")
  std::map<std::string, TaskExtract> extracts;  // by profile name
  std::string default_extract;
  double tolerance = 0;       // number
  Normalisation normalise;    // exact, regex: applied to answer and gold
  int run_order = 50;
};

// Parses `text` (the file at `path`; relative data files resolve against
// its folder).
Status ParseTaskFile(std::string_view text, const std::string& path, TaskSpec* out);
Status LoadTaskFile(const std::string& path, TaskSpec* out);

// The {name} placeholders of a template, in order (options and last_letter
// included); InvalidInput naming `where` for an unclosed brace.
Status TemplateFields(const std::string& tmpl, const std::string& where, std::vector<std::string>* fields);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_TASKS_TASK_FILE_H_
