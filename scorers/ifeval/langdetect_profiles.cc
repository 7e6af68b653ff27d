// Loading langdetect 1.0.9's data (Debian python3-langdetect,
// /usr/lib/python3/dist-packages/langdetect/): detector_factory.py
// (load_profile, add_profile), utils/messages.py and the tables of
// utils/ngram.py that messages.properties fills (NGram.LATIN1_EXCLUDE,
// the Vietnamese normalisation, CJK_CLASS). Comments name the Python they
// follow.
#include "scorers/ifeval/langdetect.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <sstream>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "evals/base/files.h"
#include "scorers/ifeval/langdetect_grams.h"
#include "scorers/py_unicode.h"

namespace evalrun {
namespace {

// The order os.listdir() returned for langdetect's profiles/ where the
// reference detections were made. Python indexes languages in directory
// order; the index order is the order in which _normalize_prob sums, so it
// decides the last bits of the probabilities (never, on the 2,167 reference
// texts, the answer). A fixed order keeps answers independent of the file
// system.
constexpr const char* kProfileOrder[] = {
    "pl", "gu", "zh-tw", "fi", "af", "ne", "ro", "da", "hr", "de", "pa", "en", "fa", "ca",
    "so", "ja", "ko", "es", "cs", "ru", "vi", "uk", "bn", "fr", "kn", "hu", "te", "lv",
    "sk", "sl", "el", "id", "it", "bg", "ta", "he", "sq", "hi", "th", "tr", "ml", "mk",
    "pt", "tl", "mr", "sv", "et", "nl", "sw", "cy", "no", "ur", "lt", "ar", "zh-cn"};

// NGram.CJK_CLASS: messages.properties keys "NGram.KANJI_<suffix>", in order
// (a later class wins for a character listed twice, as in _init_cjk_map).
constexpr const char* kKanjiClasses[] = {
    "1_0",  "1_2",  "1_4",  "1_8",  "1_11", "1_12", "1_13", "1_14", "1_16", "1_18", "1_22",
    "1_27", "1_29", "1_31", "1_35", "2_0",  "2_1",  "2_4",  "2_9",  "2_10", "2_11", "2_12",
    "2_13", "2_15", "2_16", "2_18", "2_21", "2_22", "2_23", "2_28", "2_29", "2_30", "2_31",
    "2_32", "2_35", "2_36", "2_37", "2_38", "3_1",  "3_2",  "3_3",  "3_4",  "3_5",  "3_8",
    "3_9",  "3_11", "3_12", "3_13", "3_15", "3_16", "3_18", "3_19", "3_22", "3_23", "3_27",
    "3_29", "3_30", "3_31", "3_32", "3_35", "3_36", "3_37", "3_38", "4_0",  "4_9",  "4_10",
    "4_16", "4_17", "4_18", "4_22", "4_24", "4_28", "4_34", "4_39", "5_10", "5_11", "5_12",
    "5_13", "5_14", "5_18", "5_26", "5_29", "5_34", "5_39", "6_0",  "6_3",  "6_9",  "6_10",
    "6_11", "6_12", "6_16", "6_18", "6_20", "6_21", "6_22", "6_23", "6_25", "6_28", "6_29",
    "6_30", "6_32", "6_34", "6_35", "6_37", "6_39", "7_0",  "7_3",  "7_6",  "7_7",  "7_9",
    "7_11", "7_12", "7_13", "7_16", "7_18", "7_19", "7_20", "7_21", "7_23", "7_25", "7_28",
    "7_29", "7_32", "7_33", "7_35", "7_37"};

constexpr size_t kMaxLangs = 256;  // row_langs_ holds uint8_t

// messages.py: "key=value" lines, value decoded with 'unicode_escape'
// (here: \uXXXX escapes and plain ASCII, all the file uses).
Status ParseMessages(const std::string& path, const std::string& content,
                     std::vector<std::pair<std::string, std::u32string>>* out) {
  std::istringstream in(content);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const char* ws = " \t\r\n\v\f";
    size_t b = line.find_first_not_of(ws);
    if (b == std::string::npos) continue;
    size_t e = line.find_last_not_of(ws);
    std::string s = line.substr(b, e - b + 1);
    size_t eq = s.find('=');
    std::string key = s.substr(0, eq);
    std::string raw = eq == std::string::npos ? "" : s.substr(eq + 1);
    std::u32string value;
    for (size_t i = 0; i < raw.size(); ++i) {
      unsigned char c = static_cast<unsigned char>(raw[i]);
      if (c >= 0x80) {
        return Status::InvalidInput(path + ":" + std::to_string(line_no) +
                                    ": expected ASCII with \\uXXXX escapes");
      }
      if (c != '\\') {
        value.push_back(c);
        continue;
      }
      if (i + 5 < raw.size() && raw[i + 1] == 'u') {
        unsigned v = 0;
        bool ok = true;
        for (int k = 2; k < 6; ++k) {
          char h = raw[i + k];
          v <<= 4;
          if (h >= '0' && h <= '9') v |= h - '0';
          else if (h >= 'a' && h <= 'f') v |= h - 'a' + 10;
          else if (h >= 'A' && h <= 'F') v |= h - 'A' + 10;
          else ok = false;
        }
        if (ok) {
          value.push_back(static_cast<char32_t>(v));
          i += 5;
          continue;
        }
      }
      return Status::InvalidInput(path + ":" + std::to_string(line_no) +
                                  ": expected \\uXXXX after a backslash");
    }
    out->emplace_back(std::move(key), std::move(value));
  }
  return Status::Ok();
}

}  // namespace

struct LangDetector::PendingGram {
  uint64_t key;
  uint8_t lang;
  double prob;
};

Status LangDetector::LoadMessages(const std::string& path) {
  std::string content;
  EVALRUN_RETURN_IF_ERROR(ReadFileToString(path, &content));
  std::vector<std::pair<std::string, std::u32string>> entries;
  EVALRUN_RETURN_IF_ERROR(ParseMessages(path, content, &entries));
  auto get = [&](const std::string& key, std::u32string* value) -> Status {
    // dict semantics: the last line with the key wins.
    for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
      if (it->first == key) {
        *value = it->second;
        return Status::Ok();
      }
    }
    return Status::InvalidInput(path + ": missing key " + key);
  };
  EVALRUN_RETURN_IF_ERROR(get("NGram.LATIN1_EXCLUDE", &latin1_excluded_));
  EVALRUN_RETURN_IF_ERROR(get("TO_NORMALIZE_VI_CHARS", &vi_alphabet_));
  EVALRUN_RETURN_IF_ERROR(get("DMARK_CLASS", &vi_dmarks_));
  // NORMALIZED_VI_CHARS, indexed by DMARK_CLASS position.
  for (const char* suffix : {"0300", "0301", "0303", "0309", "0323"}) {
    std::u32string v;
    EVALRUN_RETURN_IF_ERROR(get(std::string("NORMALIZED_VI_CHARS_") + suffix, &v));
    if (v.size() < vi_alphabet_.size()) {
      return Status::InvalidInput(path + ": NORMALIZED_VI_CHARS_" + suffix + ": expected " +
                                  std::to_string(vi_alphabet_.size()) + " characters");
    }
    vi_normalized_.push_back(std::move(v));
  }
  if (vi_dmarks_.empty() || vi_dmarks_.size() > vi_normalized_.size()) {
    return Status::InvalidInput(path + ": DMARK_CLASS: expected 1 to 5 marks");
  }
  dmark_min_ = *std::min_element(vi_dmarks_.begin(), vi_dmarks_.end());
  dmark_max_ = *std::max_element(vi_dmarks_.begin(), vi_dmarks_.end());
  // NGram._init_cjk_map: each character maps to its class's first character.
  cjk_map_.resize(kCjkLast - kCjkFirst + 1);
  for (char32_t c = kCjkFirst; c <= kCjkLast; ++c) cjk_map_[c - kCjkFirst] = c;
  for (const char* suffix : kKanjiClasses) {
    std::u32string cls;
    EVALRUN_RETURN_IF_ERROR(get(std::string("NGram.KANJI_") + suffix, &cls));
    if (cls.empty()) continue;
    for (char32_t c : cls) {
      if (c >= kCjkFirst && c <= kCjkLast) cjk_map_[c - kCjkFirst] = cls[0];
    }
  }
  return Status::Ok();
}

namespace {

// Reads one profile, {"freq": {gram: count, ...}, "n_words": [n1, n2, n3],
// "name": lang} (LangProfile(**json_data): no other keys), with nlohmann's
// SAX parser (no DOM: the 55 profiles are 2.3 MB).
class ProfileReader : public nlohmann::json_sax<nlohmann::json> {
 public:
  struct Gram {
    uint64_t key;  // PackGram of the first 3 code points
    size_t length;  // in code points
    double count;
  };
  std::string name;
  bool has_name = false;
  std::vector<double> n_words;
  bool has_n_words = false;
  std::vector<Gram> grams;
  std::string error;  // set when the structure is not a profile

  bool null() override { return Unexpected("null"); }
  bool boolean(bool) override { return Unexpected("a boolean"); }
  bool number_integer(number_integer_t v) override { return Number(static_cast<double>(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Number(static_cast<double>(v)); }
  bool number_float(number_float_t v, const string_t&) override { return Number(v); }
  bool string(string_t& v) override {
    if (depth_ == 1 && field_ == Field::kName) {
      name = v;
      has_name = true;
      return true;
    }
    return Unexpected("a string");
  }
  bool binary(binary_t&) override { return Unexpected("binary data"); }
  bool start_object(std::size_t) override {
    if (depth_ == 0 || (depth_ == 1 && field_ == Field::kFreq)) {
      ++depth_;
      return true;
    }
    return Unexpected("an object");
  }
  bool key(string_t& k) override {
    if (depth_ == 1) {
      if (k == "name") field_ = Field::kName;
      else if (k == "freq") field_ = Field::kFreq;
      else if (k == "n_words") field_ = Field::kNWords;
      else return Fail("unexpected key \"" + k + "\" (expected name, freq, n_words)");
      return true;
    }
    key_ = k;
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ == 1 && field_ == Field::kNWords && !in_array_) {
      in_array_ = true;
      has_n_words = true;
      n_words.clear();
      return true;
    }
    return Unexpected("an array");
  }
  bool end_array() override {
    in_array_ = false;
    return true;
  }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception& e) override {
    if (error.empty()) error = e.what();
    return false;
  }

 private:
  enum class Field { kNone, kName, kFreq, kNWords };

  bool Number(double v) {
    if (depth_ == 2) {
      // The first 3 code points and the length in code points, without a
      // string per gram (184,294 grams).
      char32_t first[3] = {0, 0, 0};
      size_t length = 0;
      for (size_t pos = 0; pos < key_.size(); ++length) {
        const char32_t c = py::DecodeUtf8(key_, &pos);
        if (length < 3) first[length] = c;
      }
      grams.push_back({langdetect::PackGram(first, std::min<size_t>(length, 3)), length, v});
      return true;
    }
    if (depth_ == 1 && in_array_) {
      n_words.push_back(v);
      return true;
    }
    return Unexpected("a number");
  }
  bool Unexpected(const char* what) {
    const char* where = depth_ == 2 ? "freq[\"" : "";
    std::string at = depth_ == 2 ? std::string(where) + key_ + "\"]"
                     : field_ == Field::kName ? "name"
                     : field_ == Field::kFreq ? "freq"
                     : field_ == Field::kNWords ? "n_words" : "top level";
    return Fail(at + ": unexpected " + what);
  }
  bool Fail(std::string msg) {
    if (error.empty()) error = std::move(msg);
    return false;
  }

  int depth_ = 0;
  Field field_ = Field::kNone;
  bool in_array_ = false;
  std::string key_;
};

}  // namespace

Status LangDetector::AddProfile(const std::string& path, size_t index,
                                std::vector<PendingGram>* grams) {
  std::string content;
  EVALRUN_RETURN_IF_ERROR(ReadFileToString(path, &content));
  ProfileReader reader;
  bool parsed = false;
  try {
    parsed = nlohmann::json::sax_parse(content, &reader);
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidInput(path + ": " + e.what());
  }
  if (!parsed || !reader.error.empty()) {
    return Status::InvalidInput(path + ": " +
                                (reader.error.empty() ? "not a JSON object" : reader.error));
  }
  if (!reader.has_name) return Status::InvalidInput(path + ": name: missing");
  if (!reader.has_n_words || reader.n_words.size() != 3) {
    return Status::InvalidInput(path + ": n_words: expected an array of 3 numbers");
  }
  for (const ProfileReader::Gram& g : reader.grams) {
    const size_t len = g.length;
    if (len < 1 || len > 3) continue;  // add_profile: if 1 <= length <= 3
    const double denom = reader.n_words[len - 1];
    if (denom == 0) {
      return Status::InvalidInput(path + ": n_words[" + std::to_string(len - 1) +
                                  "]: is 0 but freq has " + std::to_string(len) + "-grams");
    }
    // prob = 1.0 * profile.freq.get(word) / profile.n_words[length - 1]
    const double prob = 1.0 * g.count / denom;
    grams->push_back({g.key, static_cast<uint8_t>(index), prob});
  }
  if (std::find(langs_.begin(), langs_.end(), reader.name) != langs_.end()) {
    return Status::InvalidInput(path + ": name: duplicate language \"" + reader.name + "\"");
  }
  langs_.push_back(std::move(reader.name));
  return Status::Ok();
}

void LangDetector::BuildGramTable(std::vector<PendingGram>* grams) {
  const std::vector<PendingGram>& pending = *grams;
  // Rows numbered in first-seen order; a counting sort by row keeps each
  // row's languages in index order (profiles are read in index order).
  int bits = 4;
  while ((size_t{1} << bits) < pending.size()) ++bits;  // >= 2 slots per row
  slot_shift_ = 64 - bits;
  const size_t mask = (size_t{1} << bits) - 1;
  slots_.assign(size_t{1} << bits, Slot{0, 0});
  std::vector<uint32_t> row_of(pending.size());
  std::vector<uint32_t> count;
  for (size_t i = 0; i < pending.size(); ++i) {
    const uint64_t key = pending[i].key;
    size_t s = langdetect::HashSlot(key, slot_shift_);
    while (slots_[s].key != 0 && slots_[s].key != key) s = (s + 1) & mask;
    if (slots_[s].key == 0) {
      slots_[s] = Slot{key, static_cast<uint32_t>(count.size())};
      count.push_back(0);
    }
    row_of[i] = slots_[s].row;
    ++count[row_of[i]];
  }
  row_begin_.assign(count.size() + 1, 0);
  for (size_t r = 0; r < count.size(); ++r) row_begin_[r + 1] = row_begin_[r] + count[r];
  row_langs_.assign(pending.size(), 0);
  row_probs_.assign(pending.size(), 0.0);
  std::vector<uint32_t> fill(row_begin_.begin(), row_begin_.end() - 1);
  for (size_t i = 0; i < pending.size(); ++i) {
    const uint32_t r = row_of[i];
    const uint32_t e = fill[r];
    if (e > row_begin_[r] && row_langs_[e - 1] == pending[i].lang) {
      // A gram twice in one profile: the last value wins, as in a dict.
      row_probs_[e - 1] = pending[i].prob;
      continue;
    }
    row_langs_[e] = pending[i].lang;
    row_probs_[e] = pending[i].prob;
    fill[r] = e + 1;
  }
  // Close the gaps duplicates left (none in langdetect's profiles).
  size_t out = 0;
  for (size_t r = 0; r < count.size(); ++r) {
    const size_t b = row_begin_[r];
    const size_t e = fill[r];
    row_begin_[r] = static_cast<uint32_t>(out);
    for (size_t k = b; k < e; ++k, ++out) {
      row_langs_[out] = row_langs_[k];
      row_probs_[out] = row_probs_[k];
    }
  }
  row_begin_[count.size()] = static_cast<uint32_t>(out);
  row_langs_.resize(out);
  row_probs_.resize(out);
  row_langs_.shrink_to_fit();
  row_probs_.shrink_to_fit();
}

Status LangDetector::Load(const std::string& dir, std::unique_ptr<LangDetector>* out) {
  std::unique_ptr<LangDetector> d(new LangDetector());
  EVALRUN_RETURN_IF_ERROR(d->LoadMessages(dir + "/messages.properties"));

  const std::string profiles = dir + "/profiles";
  std::error_code ec;
  std::filesystem::directory_iterator it(profiles, ec);
  if (ec) {
    if (!std::filesystem::exists(profiles)) return Status::NotFound(profiles + ": no such directory");
    return Status::IoError(profiles + ": " + ec.message());
  }
  std::unordered_set<std::string> known(std::begin(kProfileOrder), std::end(kProfileOrder));
  for (const auto& entry : it) {
    std::string fname = entry.path().filename().string();
    if (fname.empty() || fname[0] == '.') continue;       // load_profile skips these
    if (!entry.is_regular_file(ec)) continue;              // and non-files
    if (!known.count(fname)) {
      return Status::InvalidInput(profiles + "/" + fname +
                                  ": not one of langdetect 1.0.9's 55 profiles");
    }
  }
  static_assert(std::size(kProfileOrder) <= kMaxLangs);
  std::vector<PendingGram> grams;
  grams.reserve(200000);
  for (size_t i = 0; i < std::size(kProfileOrder); ++i) {
    EVALRUN_RETURN_IF_ERROR(d->AddProfile(profiles + "/" + kProfileOrder[i], i, &grams));
  }
  d->BuildGramTable(&grams);
  *out = std::move(d);
  return Status::Ok();
}

}  // namespace evalrun
