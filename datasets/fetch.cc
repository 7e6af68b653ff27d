#include "datasets/fetch.h"
#include "evals/base/json_bounds.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "datasets/fetch_plan.h"
#include "datasets/zip_reader.h"
#include "evals/base/exit_codes.h"
#include "evals/base/files.h"
#include "evals/base/sha256.h"
#include "evals/server/http.h"

namespace evalrun {
namespace {

using fetch_internal::FetchSource;
using fetch_internal::GroupOf;
using fetch_internal::OnMirror;
using fetch_internal::ParseSource;
using fetch_internal::ResolveTargets;
using fetch_internal::Target;

// ---------------------------------------------------------------------------
// Checks, and the texts of the requests.

// Checks a file against its manifest entry: "" when it matches, else why not.
std::string Mismatch(const std::string& path, const ManifestFile& mf, std::string* found_sha) {
  found_sha->clear();
  int64_t size = FileSize(path);
  if (mf.bytes >= 0 && size != mf.bytes)
    return "size " + std::to_string(size) + " bytes, expected " + std::to_string(mf.bytes);
  if (mf.sha256.empty()) return "";
  Status st = Sha256File(path, found_sha);
  if (!st.ok()) return st.message();
  if (*found_sha != mf.sha256) return "sha256 " + *found_sha + ", expected " + mf.sha256;
  return "";
}

std::string SortLines(const std::string& text) {
  std::vector<std::string_view> lines;
  std::string_view v(text);
  size_t pos = 0;
  while (pos < v.size()) {
    size_t nl = v.find('\n', pos);
    if (nl == std::string_view::npos) nl = v.size();
    lines.push_back(v.substr(pos, nl - pos));
    pos = nl + 1;
  }
  std::sort(lines.begin(), lines.end());  // bytewise, as `LC_ALL=C sort`
  std::string out;
  out.reserve(text.size() + 1);
  for (auto l : lines) {
    out.append(l);
    out.push_back('\n');
  }
  return out;
}

std::string UrlEncode(const std::string& s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string Excerpt(const std::string& body) {
  std::string b = body.substr(0, 200);
  std::replace(b.begin(), b.end(), '\n', ' ');
  return body.size() > 200 ? b + "..." : b;
}

// ---------------------------------------------------------------------------
// Fetching.

// kNoConnection: the host could not be resolved or reached at all (offline,
// no DNS, a firewall): not retried, and the run stops there.
enum class Outcome { kOk, kBad, kUnreachable, kNoConnection };

struct Fetcher {
  std::string data_dir, mirror, hf_token;
  int attempts = 5, retry_delay_ms = 1000;
  FILE* out;
  FILE* err;
  bool tty = false;
  std::map<std::string, std::string> archives;  // zip URL -> downloaded copy

  std::string TokenFor(const std::string& url) const {
    return IsHuggingFaceUrl(url) ? hf_token : std::string();
  }

  void Backoff(int attempt) const {
    if (attempt >= attempts) return;
    int64_t ms = static_cast<int64_t>(retry_delay_ms) << std::min(attempt - 1, 6);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }

  // A live line on a terminal, nothing otherwise (start and end lines are
  // printed by the callers).
  struct Progress {
    const Fetcher* f;
    std::string label;
    std::chrono::steady_clock::time_point last{};
    void Update(int64_t got, int64_t total, const char* unit) {
      if (!f->tty) return;
      auto now = std::chrono::steady_clock::now();
      if (now - last < std::chrono::milliseconds(200) && got != total) return;
      last = now;
      if (total > 0)
        std::fprintf(f->err, "\r\033[K%s: %lld/%lld %s (%d%%)", label.c_str(), static_cast<long long>(got),
                     static_cast<long long>(total), unit, static_cast<int>(100 * got / total));
      else
        std::fprintf(f->err, "\r\033[K%s: %lld %s", label.c_str(), static_cast<long long>(got), unit);
      std::fflush(f->err);
    }
    void Done() {
      if (f->tty) std::fprintf(f->err, "\r\033[K");
    }
  };

  // Downloads `url` into `part`, resuming from what is there, with retries.
  Outcome Download(const std::string& url, const std::string& part, const std::string& label,
                   std::string* msg) {
    Progress progress{this, label};
    for (int attempt = 1; attempt <= attempts; ++attempt) {
      int64_t have = std::max<int64_t>(FileSize(part), 0);
      if (have > 0)
        std::fprintf(err, "%s: resuming at byte %lld\n", label.c_str(), static_cast<long long>(have));
      HttpDownloadInfo info;
      Status st = HttpDownload(
          url, part, have, TokenFor(url),
          [&](int64_t got, int64_t total) { progress.Update(got, total, "bytes"); }, &info);
      progress.Done();
      if (st.ok()) return Outcome::kOk;
      *msg = st.message();
      if (info.not_connected) return Outcome::kNoConnection;
      bool transient = st.code() == Status::Code::kUnavailable ||
                       (st.code() == Status::Code::kServerError && (info.status == 429 || info.status >= 500));
      if (st.code() == Status::Code::kIoError || st.code() == Status::Code::kInvalidInput) return Outcome::kBad;
      if (!transient) {
        if (info.status == 401 || info.status == 403)
          *msg += IsHuggingFaceUrl(url) ? " (gated or private: set HF_TOKEN)" : " (access denied)";
        return Outcome::kUnreachable;
      }
      if (attempt < attempts)
        std::fprintf(err, "%s: %s; trying again (%d/%d)\n", label.c_str(), msg->c_str(), attempt + 1, attempts);
      Backoff(attempt);
    }
    return Outcome::kUnreachable;
  }

  // Moves a verified .part into place, or keeps it as .bad.
  Outcome Finish(const ManifestFile& mf, const std::string& part, std::string* msg) {
    const std::string dest = data_dir + "/" + mf.path;
    std::string found;
    std::string why = Mismatch(part, mf, &found);
    if (!why.empty()) {
      Status st = RenameFile(part, dest + ".bad");
      *msg = "verification failed: " + why + "; the download is kept as " + dest + ".bad, not installed" +
             (st.ok() ? "" : " (" + st.message() + ")");
      return Outcome::kBad;
    }
    Status st = RenameFile(part, dest);
    if (!st.ok()) {
      *msg = st.message();
      return Outcome::kBad;
    }
    return Outcome::kOk;
  }

  Outcome FetchFile(const ManifestFile& mf, const FetchSource& src, std::string* msg) {
    const std::string part = data_dir + "/" + mf.path + ".part";
    Outcome o = Download(src.url, part, mf.path, msg);
    if (o != Outcome::kOk) return o;
    return Finish(mf, part, msg);
  }

  Outcome FetchZipMember(const ManifestFile& mf, const FetchSource& src, std::string* msg) {
    auto it = archives.find(src.url);
    if (it == archives.end()) {
      HttpUrl u;
      ParseHttpUrl(src.url, &u);
      std::string base = u.path.substr(0, u.path.find('?'));
      base = base.substr(base.rfind('/') + 1);
      const std::string archive = data_dir + "/" + DirName(mf.path) + "/." + base;
      if (FileSize(archive) < 0) {
        std::fprintf(err, "%s: downloading %s\n", mf.path.c_str(), src.url.c_str());
        Outcome o = Download(src.url, archive + ".part", base, msg);
        if (o != Outcome::kOk) return o;
        Status st = RenameFile(archive + ".part", archive);
        if (!st.ok()) {
          *msg = st.message();
          return Outcome::kBad;
        }
      }
      it = archives.emplace(src.url, archive).first;
    }
    std::string bytes;
    Status st = ReadZipMember(it->second, src.zip_member, "", &bytes);
    if (!st.ok()) {
      std::remove(it->second.c_str());  // a broken archive is downloaded again next time
      archives.erase(it);
      *msg = st.message();
      return Outcome::kBad;
    }
    if (src.sort_lines) bytes = SortLines(bytes);
    const std::string part = data_dir + "/" + mf.path + ".part";
    st = WriteFileBytes(part, bytes);
    if (!st.ok()) {
      *msg = st.message();
      return Outcome::kBad;
    }
    return Finish(mf, part, msg);
  }

  // One page of the rows API, with retries. Fills *page on success.
  Outcome GetPage(const std::string& url, const std::string& label, nlohmann::json* page, std::string* msg) {
    for (int attempt = 1; attempt <= attempts; ++attempt) {
      HttpResponse r = HttpGetUrl(url, {{"Accept", "application/json"}}, TokenFor(url), 60);
      if (r.status == 200) {
        *page = ParseJsonOrDiscarded(r.body);
        if (page->is_discarded() || !page->is_object()) {
          *msg = url + ": the answer is not a JSON object: " + Excerpt(r.body);
          return Outcome::kUnreachable;
        }
        return Outcome::kOk;
      }
      *msg = url + ": " + (r.status == 0 ? r.error : "HTTP " + std::to_string(r.status) + ": " + Excerpt(r.body));
      if (r.not_connected) return Outcome::kNoConnection;
      if (r.status != 0 && r.status != 429 && r.status < 500) {
        if (r.status == 401 || r.status == 403) *msg += " (gated or private: set HF_TOKEN)";
        return Outcome::kUnreachable;
      }
      if (attempt < attempts)
        std::fprintf(err, "%s: %s; trying again (%d/%d)\n", label.c_str(), msg->c_str(), attempt + 1, attempts);
      Backoff(attempt);
    }
    return Outcome::kUnreachable;
  }

  // Pages of the HF rows API into JSON lines (layout: fetch.h), resuming
  // after the last complete line of the .part file.
  Outcome FetchRows(const ManifestFile& mf, const FetchSource& src, std::string* msg) {
    const std::string part = data_dir + "/" + mf.path + ".part";
    int64_t offset = 0;
    if (FileSize(part) > 0) {
      std::string have;
      Status st = ReadFileToString(part, &have);
      if (!st.ok()) {
        *msg = st.message();
        return Outcome::kBad;
      }
      size_t keep = have.rfind('\n');
      keep = keep == std::string::npos ? 0 : keep + 1;
      if (::truncate(part.c_str(), static_cast<off_t>(keep)) != 0) {
        *msg = part + ": cannot cut a torn last line: " + std::strerror(errno);
        return Outcome::kBad;
      }
      offset = std::count(have.begin(), have.begin() + static_cast<std::ptrdiff_t>(keep), '\n');
      if (offset > 0) std::fprintf(err, "%s: resuming at row %lld\n", mf.path.c_str(), static_cast<long long>(offset));
    }
    FILE* f = std::fopen(part.c_str(), "ab");
    if (f == nullptr) {
      *msg = part + ": cannot open for writing: " + std::strerror(errno);
      return Outcome::kBad;
    }
    Progress progress{this, mf.path};
    Outcome o = Outcome::kOk;
    std::vector<std::string> keys;
    for (const auto& c : src.columns) keys.push_back(nlohmann::json(c).dump() + ":");
    const std::string base = src.url + "?dataset=" + UrlEncode(src.dataset) + "&config=" + UrlEncode(src.config) +
                             "&split=" + UrlEncode(src.split);
    while (offset < mf.rows) {
      int64_t want = std::min<int64_t>(src.page_rows, mf.rows - offset);
      const std::string url = base + "&offset=" + std::to_string(offset) + "&length=" + std::to_string(want);
      nlohmann::json page;
      o = GetPage(url, mf.path, &page, msg);
      if (o != Outcome::kOk) break;
      std::string lines;
      o = PageToLines(page, url, mf, src, keys, offset, &lines, msg);
      if (o != Outcome::kOk) break;
      if (std::fwrite(lines.data(), 1, lines.size(), f) != lines.size() || std::fflush(f) != 0) {
        *msg = part + ": write failed: " + std::strerror(errno);
        o = Outcome::kBad;
        break;
      }
      offset += static_cast<int64_t>(page["rows"].size());
      progress.Update(offset, mf.rows, "rows");
    }
    progress.Done();
    if (std::fclose(f) != 0 && o == Outcome::kOk) {
      *msg = part + ": write failed: " + std::strerror(errno);
      o = Outcome::kBad;
    }
    if (o != Outcome::kOk) return o;
    return Finish(mf, part, msg);
  }

  // Checks one page (shape, total, row indices, no truncation) and writes
  // its rows as lines.
  static Outcome PageToLines(const nlohmann::json& page, const std::string& url, const ManifestFile& mf,
                             const FetchSource& src, const std::vector<std::string>& keys, int64_t offset,
                             std::string* lines, std::string* msg) {
    const auto rows = page.find("rows");
    const auto total = page.find("num_rows_total");
    if (rows == page.end() || !rows->is_array() || total == page.end() || !total->is_number_integer()) {
      *msg = url + ": expected {\"rows\": [...], \"num_rows_total\": N, ...}, got " + Excerpt(page.dump());
      return Outcome::kUnreachable;
    }
    if (total->get<int64_t>() != mf.rows) {
      *msg = url + ": the source has " + std::to_string(total->get<int64_t>()) + " rows, the manifest expects " +
             std::to_string(mf.rows) + " (another revision of " + src.dataset + "?)";
      return Outcome::kBad;
    }
    if (rows->empty()) {
      *msg = url + ": no rows at offset " + std::to_string(offset);
      return Outcome::kUnreachable;
    }
    try {
      int64_t idx = offset;
      for (const auto& r : *rows) {
        const auto ri = r.is_object() ? r.find("row_idx") : r.end();
        if (!r.is_object() || ri == r.end() || !ri->is_number_integer() || ri->get<int64_t>() != idx ||
            !r.contains("row") || !r["row"].is_object()) {
          *msg = url + ": expected row " + std::to_string(idx) + " as {\"row_idx\": " + std::to_string(idx) +
                 ", \"row\": {...}}, got " + Excerpt(r.dump());
          return Outcome::kUnreachable;
        }
        if (r.contains("truncated_cells") && !r["truncated_cells"].empty()) {
          *msg = url + ": row " + std::to_string(idx) + " came with truncated cells " + r["truncated_cells"].dump();
          return Outcome::kBad;
        }
        const auto& row = r["row"];
        lines->push_back('{');
        for (size_t c = 0; c < src.columns.size(); ++c) {
          auto v = row.find(src.columns[c]);
          if (v == row.end()) {
            *msg = url + ": row " + std::to_string(idx) + " has no column \"" + src.columns[c] + "\"";
            return Outcome::kBad;
          }
          if (c > 0) lines->push_back(',');
          lines->append(keys[c]);
          lines->append(v->dump(-1, ' ', false, nlohmann::json::error_handler_t::strict));
        }
        lines->append("}\n");
        ++idx;
      }
    } catch (const nlohmann::json::exception& e) {
      *msg = url + ": a row cannot be written as JSON: " + e.what();
      return Outcome::kBad;
    }
    return Outcome::kOk;
  }

  // One file: already there and verified, or fetched, verified and installed.
  Outcome FetchOne(const Target& t, const FetchSource& source, std::string* msg, bool* was_present) {
    const ManifestFile& mf = *t.file;
    const std::string dest = data_dir + "/" + mf.path;
    *was_present = false;
    Status st = MakeDirectories(DirName(dest));
    if (!st.ok()) {
      *msg = st.message();
      return Outcome::kBad;
    }
    if (FileSize(dest) >= 0) {
      std::string found;
      std::string why = Mismatch(dest, mf, &found);
      if (why.empty()) {
        *was_present = true;
        return Outcome::kOk;
      }
      std::fprintf(err, "%s: present but does not verify (%s): moved to %s.bad, fetching it again\n",
                   mf.path.c_str(), why.c_str(), dest.c_str());
      st = RenameFile(dest, dest + ".bad");
      if (!st.ok()) {
        *msg = st.message();
        return Outcome::kBad;
      }
    }
    FetchSource src = mirror.empty() ? source : OnMirror(source, mirror, mf.path);
    if (src.kind != FetchSource::Kind::kZipMember)
      std::fprintf(err, "%s: downloading %s\n", mf.path.c_str(),
                   src.kind == FetchSource::Kind::kHfRows ? (src.url + " (" + src.dataset + ", " + src.split + ", " +
                                                             std::to_string(mf.rows) + " rows)").c_str()
                                                          : src.url.c_str());
    switch (src.kind) {
      case FetchSource::Kind::kFile: return FetchFile(mf, src, msg);
      case FetchSource::Kind::kZipMember: return FetchZipMember(mf, src, msg);
      case FetchSource::Kind::kHfRows: return FetchRows(mf, src, msg);
    }
    return Outcome::kBad;
  }
};

std::string TrimSlashes(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

std::string EnvOr(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

bool IsHuggingFaceUrl(const std::string& url) {
  HttpUrl u;
  if (!ParseHttpUrl(url, &u) || u.scheme != "https") return false;
  const std::string suffix = ".huggingface.co";
  return u.host == "huggingface.co" ||
         (u.host.size() > suffix.size() && u.host.compare(u.host.size() - suffix.size(), suffix.size(), suffix) == 0);
}

int DatasetsFetch(const FetchOptions& options, FILE* out, FILE* err) {
  const std::vector<Manifest>& manifests = options.manifests ? *options.manifests : AllManifests();
  Fetcher f;
  f.data_dir = TrimSlashes(options.data_dir.empty() ? DefaultDataDir() : options.data_dir);
  f.mirror = TrimSlashes(options.mirror.empty() ? EnvOr("EVALRUN_DATASETS_MIRROR") : options.mirror);
  f.hf_token = EnvOr("HF_TOKEN");
  f.attempts = std::max(1, options.attempts);
  f.retry_delay_ms = std::max(0, options.retry_delay_ms);
  f.out = out;
  f.err = err;
  f.tty = ::isatty(::fileno(err)) != 0;
  if (f.data_dir.empty()) f.data_dir = "/";

  std::vector<Target> targets;
  Status st = ResolveTargets(manifests, options.names, &targets);
  std::vector<FetchSource> sources(targets.size());
  for (size_t i = 0; st.ok() && i < targets.size(); ++i)
    st = ParseSource(*targets[i].manifest, *targets[i].file, &sources[i]);
  if (st.ok() && !f.mirror.empty()) {
    HttpUrl u;
    if (!ParseHttpUrl(f.mirror, &u))
      st = Status::InvalidInput("--mirror / EVALRUN_DATASETS_MIRROR \"" + f.mirror + "\": expected an http(s) URL");
  }
  if (!st.ok()) {
    std::fprintf(err, "evalrun datasets fetch: %s\n", st.message().c_str());
    return kExitBadInput;
  }
  std::fprintf(err, "data dir: %s%s\n", f.data_dir.c_str(), f.mirror.empty() ? "" : (", mirror: " + f.mirror).c_str());

  int ok = 0, present = 0, bad = 0, unreachable = 0, not_tried = 0;
  for (size_t i = 0; i < targets.size(); ++i) {
    const ManifestFile& mf = *targets[i].file;
    std::string msg;
    bool was_present = false;
    Outcome o = f.FetchOne(targets[i], sources[i], &msg, &was_present);
    const int64_t size = FileSize(f.data_dir + "/" + mf.path);
    if (o == Outcome::kOk) {
      ++ok;
      if (was_present) ++present;
      std::fprintf(out, "%-9s %-40s %10lld bytes, sha256 verified\n", was_present ? "present" : "fetched",
                   mf.path.c_str(), static_cast<long long>(size));
    } else {
      (o == Outcome::kBad ? bad : unreachable) += 1;
      std::fprintf(out, "%-9s %s\n", "FAILED", mf.path.c_str());
      std::fprintf(err, "%s: %s\n", mf.path.c_str(), msg.c_str());
    }
    std::fflush(out);
    if (o == Outcome::kNoConnection) {
      // Offline: every other file would fail the same way, after retries.
      not_tried = static_cast<int>(targets.size() - i - 1);
      std::fprintf(err,
                   "evalrun datasets fetch: stopped: %s could not be reached (above), so the other %d file(s) "
                   "were not tried. Without internet, either take the files from a mirror (--mirror URL, or "
                   "$EVALRUN_DATASETS_MIRROR: any HTTP server of a data dir's copy), or point --data-dir (or "
                   "$EVALRUN_DATA) at a folder that already holds the data (`evalrun datasets list --data-dir "
                   "DIR` checks it)\n",
                   f.mirror.empty() ? "the source" : "the mirror", not_tried);
      break;
    }
  }
  for (const auto& [url, path] : f.archives) std::remove(path.c_str());
  std::fprintf(err, "%d of %zu files in place (%d already were)", ok, targets.size(), present);
  if (bad + unreachable > 0) std::fprintf(err, "; %d failed", bad + unreachable);
  if (not_tried > 0) std::fprintf(err, "; %d not tried", not_tried);
  std::fprintf(err, "\n");
  if (bad > 0) return kExitBadInput;
  if (unreachable > 0) return kExitUnreachable;
  return kExitOk;
}

int DatasetsList(const ListOptions& options, FILE* out, FILE* err) {
  const std::vector<Manifest>& manifests = options.manifests ? *options.manifests : AllManifests();
  const std::string data_dir = TrimSlashes(options.data_dir.empty() ? DefaultDataDir() : options.data_dir);
  struct stat st;
  bool dir_exists = ::stat(data_dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  std::fprintf(out, "data dir: %s%s\n", data_dir.c_str(), dir_exists ? "" : " (does not exist)");
  std::fprintf(out, "%-8s %10s  %s\n", "STATUS", "BYTES", "FILE");
  int n_ok = 0, n_missing = 0, n_corrupt = 0, n_optional_absent = 0, required_bad = 0;
  for (const auto& m : manifests) {
    for (const auto& f : m.files) {
      const std::string path = data_dir + "/" + f.path;
      const int64_t size = FileSize(path);
      std::string status, note;
      if (size >= 0) {
        std::string found;
        std::string why = Mismatch(path, f, &found);
        if (why.empty()) {
          status = "ok";
          ++n_ok;
        } else {
          status = "CORRUPT";
          note = why;
          ++n_corrupt;
        }
      } else {
        const int64_t part = FileSize(path + ".part");
        status = part >= 0 ? "partial" : "missing";
        if (part >= 0) note = std::to_string(part) + " bytes in .part; fetch resumes";
        if (f.optional) ++n_optional_absent;
        else ++n_missing;
      }
      if (status != "ok" && !f.optional) ++required_bad;
      if (FileSize(path + ".bad") >= 0) note += std::string(note.empty() ? "" : "; ") + ".bad kept";
      if (f.optional) {
        std::string group = GroupOf(f).empty() ? f.path : GroupOf(f);
        note += std::string(note.empty() ? "" : "; ") + "optional (evalrun datasets fetch " + group + ")";
      }
      std::string bytes = size >= 0 ? std::to_string(size) : "-";
      std::fprintf(out, "%-8s %10s  %s%s\n", status.c_str(), bytes.c_str(), f.path.c_str(),
                   note.empty() ? "" : ("  [" + note + "]").c_str());
    }
  }
  std::fprintf(out, "%d ok, %d missing, %d corrupt, %d optional not fetched\n", n_ok, n_missing, n_corrupt,
               n_optional_absent);
  if (required_bad > 0) {
    std::fprintf(err, "evalrun datasets list: %d required file(s) missing or not verifying; get them with: "
                 "evalrun datasets fetch --data-dir %s\n", required_bad, data_dir.c_str());
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace evalrun
