#include "scorers/ruler_metrics.h"

#include "scorers/py_unicode.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace evalrun {
namespace {

using py::AppendUtf8;
using py::Utf8Char;
// RULER's text has always been decoded by byte shape alone (see py::Utf8Check).
constexpr py::Utf8Check kShapeOnly = py::Utf8Check::kShapeOnly;
// The code point recorded for an undecodable byte: no case, not ignorable.
constexpr uint32_t kInvalidByte = 0xFFFFFFFF;

// Python 3.11 (Unicode 14) str.lower() one-to-one mappings, as runs:
// {first code point, count, stride, delta}: for k < count, the code point
// first + k*stride lowers to itself + delta. Generated from CPython's
// unicodedata tables (every c with len(chr(c).lower()) == 1 != c); U+0130
// (the only one-to-many mapping) is handled in code.
struct LowerRun {
  uint32_t first;
  int count;
  int stride;
  int delta;
};

constexpr LowerRun kLowerRuns[] = {
    {0x0041, 26, 1, 32},    {0x00C0, 23, 1, 32},    {0x00D8, 7, 1, 32},     {0x0100, 24, 2, 1},
    {0x0132, 3, 2, 1},      {0x0139, 8, 2, 1},      {0x014A, 23, 2, 1},     {0x0178, 1, 1, -121},
    {0x0179, 3, 2, 1},      {0x0181, 1, 1, 210},    {0x0182, 2, 2, 1},      {0x0186, 1, 1, 206},
    {0x0187, 1, 1, 1},      {0x0189, 2, 1, 205},    {0x018B, 1, 1, 1},      {0x018E, 1, 1, 79},
    {0x018F, 1, 1, 202},    {0x0190, 1, 1, 203},    {0x0191, 1, 1, 1},      {0x0193, 1, 1, 205},
    {0x0194, 1, 1, 207},    {0x0196, 1, 1, 211},    {0x0197, 1, 1, 209},    {0x0198, 1, 1, 1},
    {0x019C, 1, 1, 211},    {0x019D, 1, 1, 213},    {0x019F, 1, 1, 214},    {0x01A0, 3, 2, 1},
    {0x01A6, 1, 1, 218},    {0x01A7, 1, 1, 1},      {0x01A9, 1, 1, 218},    {0x01AC, 1, 1, 1},
    {0x01AE, 1, 1, 218},    {0x01AF, 1, 1, 1},      {0x01B1, 2, 1, 217},    {0x01B3, 2, 2, 1},
    {0x01B7, 1, 1, 219},    {0x01B8, 1, 1, 1},      {0x01BC, 1, 1, 1},      {0x01C4, 1, 1, 2},
    {0x01C5, 1, 1, 1},      {0x01C7, 1, 1, 2},      {0x01C8, 1, 1, 1},      {0x01CA, 1, 1, 2},
    {0x01CB, 9, 2, 1},      {0x01DE, 9, 2, 1},      {0x01F1, 1, 1, 2},      {0x01F2, 2, 2, 1},
    {0x01F6, 1, 1, -97},    {0x01F7, 1, 1, -56},    {0x01F8, 20, 2, 1},     {0x0220, 1, 1, -130},
    {0x0222, 9, 2, 1},      {0x023A, 1, 1, 10795},  {0x023B, 1, 1, 1},      {0x023D, 1, 1, -163},
    {0x023E, 1, 1, 10792},  {0x0241, 1, 1, 1},      {0x0243, 1, 1, -195},   {0x0244, 1, 1, 69},
    {0x0245, 1, 1, 71},     {0x0246, 5, 2, 1},      {0x0370, 2, 2, 1},      {0x0376, 1, 1, 1},
    {0x037F, 1, 1, 116},    {0x0386, 1, 1, 38},     {0x0388, 3, 1, 37},     {0x038C, 1, 1, 64},
    {0x038E, 2, 1, 63},     {0x0391, 17, 1, 32},    {0x03A3, 9, 1, 32},     {0x03CF, 1, 1, 8},
    {0x03D8, 12, 2, 1},     {0x03F4, 1, 1, -60},    {0x03F7, 1, 1, 1},      {0x03F9, 1, 1, -7},
    {0x03FA, 1, 1, 1},      {0x03FD, 3, 1, -130},   {0x0400, 16, 1, 80},    {0x0410, 32, 1, 32},
    {0x0460, 17, 2, 1},     {0x048A, 27, 2, 1},     {0x04C0, 1, 1, 15},     {0x04C1, 7, 2, 1},
    {0x04D0, 48, 2, 1},     {0x0531, 38, 1, 48},    {0x10A0, 38, 1, 7264},  {0x10C7, 1, 1, 7264},
    {0x10CD, 1, 1, 7264},   {0x13A0, 80, 1, 38864}, {0x13F0, 6, 1, 8},      {0x1C90, 43, 1, -3008},
    {0x1CBD, 3, 1, -3008},  {0x1E00, 75, 2, 1},     {0x1E9E, 1, 1, -7615},  {0x1EA0, 48, 2, 1},
    {0x1F08, 8, 1, -8},     {0x1F18, 6, 1, -8},     {0x1F28, 8, 1, -8},     {0x1F38, 8, 1, -8},
    {0x1F48, 6, 1, -8},     {0x1F59, 4, 2, -8},     {0x1F68, 8, 1, -8},     {0x1F88, 8, 1, -8},
    {0x1F98, 8, 1, -8},     {0x1FA8, 8, 1, -8},     {0x1FB8, 2, 1, -8},     {0x1FBA, 2, 1, -74},
    {0x1FBC, 1, 1, -9},     {0x1FC8, 4, 1, -86},    {0x1FCC, 1, 1, -9},     {0x1FD8, 2, 1, -8},
    {0x1FDA, 2, 1, -100},   {0x1FE8, 2, 1, -8},     {0x1FEA, 2, 1, -112},   {0x1FEC, 1, 1, -7},
    {0x1FF8, 2, 1, -128},   {0x1FFA, 2, 1, -126},   {0x1FFC, 1, 1, -9},     {0x2126, 1, 1, -7517},
    {0x212A, 1, 1, -8383},  {0x212B, 1, 1, -8262},  {0x2132, 1, 1, 28},     {0x2160, 16, 1, 16},
    {0x2183, 1, 1, 1},      {0x24B6, 26, 1, 26},    {0x2C00, 48, 1, 48},    {0x2C60, 1, 1, 1},
    {0x2C62, 1, 1, -10743}, {0x2C63, 1, 1, -3814},  {0x2C64, 1, 1, -10727}, {0x2C67, 3, 2, 1},
    {0x2C6D, 1, 1, -10780}, {0x2C6E, 1, 1, -10749}, {0x2C6F, 1, 1, -10783}, {0x2C70, 1, 1, -10782},
    {0x2C72, 1, 1, 1},      {0x2C75, 1, 1, 1},      {0x2C7E, 2, 1, -10815}, {0x2C80, 50, 2, 1},
    {0x2CEB, 2, 2, 1},      {0x2CF2, 1, 1, 1},      {0xA640, 23, 2, 1},     {0xA680, 14, 2, 1},
    {0xA722, 7, 2, 1},      {0xA732, 31, 2, 1},     {0xA779, 2, 2, 1},      {0xA77D, 1, 1, -35332},
    {0xA77E, 5, 2, 1},      {0xA78B, 1, 1, 1},      {0xA78D, 1, 1, -42280}, {0xA790, 2, 2, 1},
    {0xA796, 10, 2, 1},     {0xA7AA, 1, 1, -42308}, {0xA7AB, 1, 1, -42319}, {0xA7AC, 1, 1, -42315},
    {0xA7AD, 1, 1, -42305}, {0xA7AE, 1, 1, -42308}, {0xA7B0, 1, 1, -42258}, {0xA7B1, 1, 1, -42282},
    {0xA7B2, 1, 1, -42261}, {0xA7B3, 1, 1, 928},    {0xA7B4, 8, 2, 1},      {0xA7C4, 1, 1, -48},
    {0xA7C5, 1, 1, -42307}, {0xA7C6, 1, 1, -35384}, {0xA7C7, 2, 2, 1},      {0xA7D0, 1, 1, 1},
    {0xA7D6, 2, 2, 1},      {0xA7F5, 1, 1, 1},      {0xFF21, 26, 1, 32},    {0x10400, 40, 1, 40},
    {0x104B0, 36, 1, 40},   {0x10570, 11, 1, 39},   {0x1057C, 15, 1, 39},   {0x1058C, 7, 1, 39},
    {0x10594, 2, 1, 39},    {0x10C80, 51, 1, 64},   {0x118A0, 32, 1, 32},   {0x16E40, 32, 1, 32},
    {0x1E900, 34, 1, 34},
};

// Lower-case partner from the table, or `c` itself.
uint32_t LowerOne(uint32_t c) {
  // Runs are sorted by `first`; find the last run starting at or before c.
  const LowerRun* end = kLowerRuns + sizeof(kLowerRuns) / sizeof(kLowerRuns[0]);
  const LowerRun* it = std::upper_bound(kLowerRuns, end, c,
                                        [](uint32_t v, const LowerRun& r) { return v < r.first; });
  if (it == kLowerRuns) return c;
  --it;
  const uint32_t off = c - it->first;
  if (off % it->stride != 0) return c;
  if (off / it->stride >= static_cast<uint32_t>(it->count)) return c;
  return static_cast<uint32_t>(static_cast<int64_t>(c) + it->delta);
}

// Approximation of Unicode "cased": an upper-case letter of the table or the
// lower-case letter it maps to, plus ASCII/Latin-1 letters.
bool IsCased(uint32_t c) {
  if (c == kInvalidByte) return false;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  if (LowerOne(c) != c) return true;
  for (const LowerRun& r : kLowerRuns) {
    const int64_t lo = static_cast<int64_t>(r.first) + r.delta;
    const int64_t d = static_cast<int64_t>(c) - lo;
    if (d >= 0 && d % r.stride == 0 && d / r.stride < r.count) return true;
  }
  return false;
}

// Approximation of Unicode "case-ignorable" (the common ones).
bool IsCaseIgnorable(uint32_t c) {
  switch (c) {
    case 0x27:
    case 0x2E:
    case 0x3A:
    case 0x5E:
    case 0x60:
    case 0xA8:
    case 0xAD:
    case 0xAF:
    case 0xB4:
    case 0xB7:
    case 0xB8:
    case 0x2018:
    case 0x2019:
    case 0x2024:
    case 0x2027:
      return true;
    default:
      return c >= 0x300 && c <= 0x36F;
  }
}

bool Contains(const std::string& lowered_pred, const std::string& ref) {
  return lowered_pred.find(PyLower(ref)) != std::string::npos;
}

}  // namespace

const char* RulerMetricName(RulerMetric metric) {
  return metric == RulerMetric::kStringMatchAll ? "string_match_all" : "string_match_part";
}

std::string RulerPostprocess(std::string_view pred) {
  std::string s(py::PyStrip(pred, kShapeOnly));
  for (char& c : s) {
    if (static_cast<unsigned char>(c) <= 0x1F) c = '\n';
  }
  return std::string(py::PyStrip(s, kShapeOnly));
}

std::string PyLower(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  // Decoded code points are needed for the final-sigma look-around.
  std::vector<uint32_t> cps;
  std::vector<size_t> lens;
  for (size_t i = 0; i < text.size();) {
    const Utf8Char c = py::DecodeUtf8At(text, i, kShapeOnly);
    cps.push_back(c.valid ? c.cp : kInvalidByte);
    lens.push_back(c.len);
    i += c.len;
  }
  size_t pos = 0;
  for (size_t k = 0; k < cps.size(); ++k) {
    const uint32_t c = cps[k];
    if (c == kInvalidByte) {
      out.append(text.substr(pos, lens[k]));
    } else if (c < 0x80) {
      out.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c));
    } else if (c == 0x130) {
      out.append("i\xCC\x87");  // U+0069 U+0307
    } else if (c == 0x3A3) {
      // Final_Sigma: cased (case-ignorable)* SIGMA not followed by
      // (case-ignorable)* cased.
      size_t j = k;
      while (j > 0 && IsCaseIgnorable(cps[j - 1])) --j;
      bool final_sigma = j > 0 && IsCased(cps[j - 1]);
      if (final_sigma) {
        size_t f = k + 1;
        while (f < cps.size() && IsCaseIgnorable(cps[f])) ++f;
        final_sigma = f == cps.size() || !IsCased(cps[f]);
      }
      AppendUtf8(final_sigma ? 0x3C2 : 0x3C3, &out);
    } else {
      AppendUtf8(LowerOne(c), &out);
    }
    pos += lens[k];
  }
  return out;
}

double StringMatchAll(std::string_view pred, const std::vector<std::string>& refs) {
  if (refs.empty()) return 0.0;
  const std::string p = PyLower(RulerPostprocess(pred));
  double hits = 0.0;  // sum([1.0 if ... else 0.0 for r in ref])
  for (const std::string& r : refs) hits += Contains(p, r) ? 1.0 : 0.0;
  return hits / static_cast<double>(refs.size());
}

double StringMatchPart(std::string_view pred, const std::vector<std::string>& refs) {
  if (refs.empty()) return 0.0;
  const std::string p = PyLower(RulerPostprocess(pred));
  for (const std::string& r : refs) {
    if (Contains(p, r)) return 1.0;
  }
  return 0.0;
}

double RulerSampleScore(RulerMetric metric, std::string_view pred,
                        const std::vector<std::string>& refs) {
  return metric == RulerMetric::kStringMatchAll ? StringMatchAll(pred, refs)
                                                : StringMatchPart(pred, refs);
}

double PyRound2(double x) {
  // glibc's printf rounds the exact binary value half-to-even, as CPython's
  // round() does (both are correctly rounded).
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  return std::strtod(buf, nullptr);
}

double RulerTaskScoreFromSamples(const std::vector<double>& per_sample) {
  if (per_sample.empty()) return 0.0;
  double sum = 0.0;
  for (double s : per_sample) sum += s;
  return PyRound2(sum / static_cast<double>(per_sample.size()) * 100);
}

RulerTaskScore ScoreRulerTask(RulerMetric metric, const std::vector<std::string>& preds,
                              const std::vector<std::vector<std::string>>& refs) {
  RulerTaskScore out;
  const size_t n = std::min(preds.size(), refs.size());
  std::vector<double> per_sample;
  per_sample.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (RulerPostprocess(preds[i]).empty()) ++out.nulls;
    per_sample.push_back(RulerSampleScore(metric, preds[i], refs[i]));
  }
  out.total = static_cast<int>(n);
  out.score = RulerTaskScoreFromSamples(per_sample);
  return out;
}

}  // namespace evalrun
