// Numbered notes under a table: a remark that several rows share (a speed
// step's "sent over /completion ..." mark) is written once under the table
// and each row carries only its number, so a row stays one line tall and the
// table fits its box. Numbers are given in the order the texts first come.
//
// Thread-safety: a value; no shared state.
#ifndef EVALRUN_EVALS_PUBLISH_TABLE_NOTES_H_
#define EVALRUN_EVALS_PUBLISH_TABLE_NOTES_H_

#include <string>
#include <vector>

namespace evalrun {

class TableNotes {
 public:
  // The numbers of `texts` ("1, 3"; "" for none), each text numbered once
  // across every call; empty texts are skipped.
  std::string Refs(const std::vector<std::string>& texts);

  bool empty() const { return texts_.empty(); }
  // <ol class="notes"> with every text escaped ("" when there is none).
  std::string Html() const;
  // "Notes:\n\n1. text\n2. text\n\n" ("" when there is none).
  std::string Markdown() const;

 private:
  std::vector<std::string> texts_;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_TABLE_NOTES_H_
