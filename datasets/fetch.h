// `evalrun datasets fetch` and `evalrun datasets list`: the benchmark files
// from their public sources, checked against the manifests (datasets/
// manifest.h: a benchmark's in its folder, the shared ones in
// datasets/manifests/) before they are installed.
//
// Where a file comes from is its manifest entry's "source":
//   {"url": U}                                   a plain download of U;
//   {"url": Z, "zip_member": M, "transform": T}  member M of the zip at Z
//                                                (T "sort-lines": lines sorted
//                                                bytewise, as our copy keeps them);
//   {"url": E, "hf_rows": {"dataset", "config", "split", "columns", "page_rows"}}
//       the Hugging Face dataset viewer's rows API at E (".../rows"), paged
//       with offset/length; every row is written as one JSON line, keys in
//       `columns` order, no spaces, UTF-8 unescaped (the manifest's sha256 is
//       that of the result).
//
// What fetch does for each file <data-dir>/<path>:
//   - a file already there that verifies (sha256) is left alone; one that
//     does not is moved to <path>.bad and fetched again;
//   - the download goes to <path>.part and resumes from it: plain files with
//     an HTTP Range request, paged sources from the last complete row (a torn
//     last line is cut); a zip is downloaded to <dir>/.<zip name>.part, and
//     deleted once its members are out;
//   - the result is checked (bytes, rows when paged, sha256); a match is
//     renamed into place (atomic), a mismatch is kept as <path>.bad, never
//     installed, and reported with both digests;
//   - transient failures (a broken or stalled transfer, HTTP 429 and 5xx)
//     are retried `attempts` times in all, resuming each time;
//   - a host that cannot be resolved or connected to (offline, no DNS, a
//     firewall) is not retried: fetch stops at the first such file, with
//     one message naming the host and the ways round it (--mirror,
//     --data-dir / $EVALRUN_DATA), and returns kExitUnreachable within
//     seconds (the 15 s connect timeout at most).
// Progress goes to `err` (a live line on a terminal, start and end lines
// otherwise); one result line per file goes to `out`.
//
// Mirror: --mirror URL (or $EVALRUN_DATASETS_MIRROR) replaces every source.
// Layout under the mirror: <mirror>/<path> for every file, as installed
// (plain, zip-member and paged sources alike), so a served copy of a data
// dir is a mirror: `python3 -m http.server` in it, or any static server.
//
// Gated sources: $HF_TOKEN, when set, is sent as "Authorization: Bearer" to
// Hugging Face hosts only (huggingface.co and its subdomains, https), never to
// a mirror or a redirect target elsewhere, and never printed.
//
// Not thread-safe with itself on the same data dir (one fetch at a time).
//
// Thread-safety: one fetch per data folder at a time (below); it runs on
// the caller's thread.
#ifndef EVALRUN_DATASETS_FETCH_H_
#define EVALRUN_DATASETS_FETCH_H_

#include <cstdio>
#include <string>
#include <vector>

#include "datasets/manifest.h"

namespace evalrun {

struct FetchOptions {
  // What to fetch; empty means every dataset's required files. Each name is
  // a dataset (a manifest's name, "<dataset>", "punkt-english",
  // "langdetect": its required files and those of the datasets it "needs"),
  // a group of optional files (a manifest's "fetch_group"), a file path
  // from a manifest ("<dataset>/<file>"), or "all" (everything, optional
  // files included).
  std::vector<std::string> names;
  std::string data_dir;   // empty: DefaultDataDir()
  std::string mirror;     // empty: $EVALRUN_DATASETS_MIRROR, else the sources
  int attempts = 5;       // tries per file (or per page), resuming each time
  int retry_delay_ms = 1000;  // before try n+1: retry_delay_ms * 2^(n-1) (1+2+4+8 s)
  // The manifests to work from; null means AllManifests() (tests pass their own).
  const std::vector<Manifest>* manifests = nullptr;
};

struct ListOptions {
  std::string data_dir;   // empty: DefaultDataDir()
  const std::vector<Manifest>* manifests = nullptr;  // null: AllManifests()
};

// Exit codes (evals/base/exit_codes.h): kExitOk when every requested file is in
// place and verified; kExitBadInput for an unknown name, a manifest without a
// source, a local I/O error or a file that failed verification (kept as
// .bad); else kExitUnreachable when a source could not be downloaded (no
// answer, HTTP error; partial data kept for the next run).
int DatasetsFetch(const FetchOptions& options, FILE* out, FILE* err);

// Prints, for every manifest file: its status (ok, missing, corrupt,
// partial download), size, path under the data dir, and whether it is
// optional (with the fetch name that gets it). Every present file is hashed.
// kExitOk when every required file verifies, else kExitBadInput.
int DatasetsList(const ListOptions& options, FILE* out, FILE* err);

// True when $HF_TOKEN may be sent to `url`: https and a host that is
// huggingface.co or ends in ".huggingface.co".
bool IsHuggingFaceUrl(const std::string& url);

}  // namespace evalrun

#endif  // EVALRUN_DATASETS_FETCH_H_
