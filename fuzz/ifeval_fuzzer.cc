// libFuzzer target: the IFEval checkers (scorers/ifeval/ifeval_eval.h) on arbitrary
// responses, valid UTF-8 or not.
//
// Set-up, once: Punkt and langdetect are loaded from $EVALRUN_FUZZ_DATA
// (default ../shared/datasets beside the checkout), and one prompt is
// compiled per instruction id of the registry, with the kwargs of the first
// dataset row (ifeval/input_data.jsonl) that uses it; ids the dataset never
// uses are compiled with null kwargs. The first input byte picks the
// instruction (modulo their number; one check per run keeps the fuzzer
// fast), the rest is the response, evaluated strict and loose. Contracts
// checked besides the sanitizers:
//  - one verdict per instruction; follow_all == all(follow_list);
//  - strict implies loose, instruction by instruction (the loose checker's
//    first variant is the response itself).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "evals/base/json_fields.h"
#include "evals/base/jsonl.h"
#include "scorers/ifeval/ifeval_checkers.h"
#include "scorers/ifeval/ifeval_eval.h"
#include "scorers/ifeval/langdetect.h"
#include "scorers/punkt.h"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

void Die(const evalrun::Status& st) {
  std::fprintf(stderr, "ifeval_fuzzer: %s\n(set EVALRUN_FUZZ_DATA to the datasets folder)\n",
               st.ToString().c_str());
  std::exit(1);
}

struct Setup {
  std::unique_ptr<evalrun::PunktModel> punkt;
  std::unique_ptr<evalrun::LangDetector> lang;
  evalrun::IfevalResources res;
  std::vector<std::unique_ptr<const evalrun::IfevalPrompt>> prompts;
};

const Setup& GetSetup() {
  static const Setup* setup = [] {
    auto* s = new Setup;
    const char* env = std::getenv("EVALRUN_FUZZ_DATA");
    const std::string dir = env && *env ? env : EVALRUN_FUZZ_DATA_DEFAULT;
    evalrun::Status st = evalrun::PunktModel::Load(dir + "/punkt-english", &s->punkt);
    if (st.ok()) st = evalrun::LangDetector::Load(dir + "/langdetect", &s->lang);
    if (!st.ok()) Die(st);
    s->res.punkt = s->punkt.get();
    s->res.lang = s->lang.get();

    // The kwargs of the first row using each id.
    const std::string path = dir + "/ifeval/input_data.jsonl";
    std::string text;
    st = evalrun::ReadFileToString(path, &text);
    if (!st.ok()) Die(st);
    std::map<std::string, nlohmann::json> kwargs_of;
    st = evalrun::ParseJsonl(text, path, [&](int line, const nlohmann::json& row) {
      evalrun::IfevalPromptSpec spec;
      EVALRUN_RETURN_IF_ERROR(evalrun::ParseIfevalPromptSpec(row, path + ":" + std::to_string(line), &spec));
      for (size_t i = 0; i < spec.instruction_ids.size(); ++i)
        kwargs_of.emplace(spec.instruction_ids[i], spec.kwargs[i]);
      return evalrun::Status::Ok();
    });
    if (!st.ok()) Die(st);

    int64_t key = 0;
    for (const auto& id : evalrun::IfevalInstructionIds()) {
      evalrun::IfevalPromptSpec spec;
      spec.key = ++key;
      spec.prompt = "fuzz";
      spec.instruction_ids = {id};
      auto it = kwargs_of.find(id);
      spec.kwargs = {it == kwargs_of.end() ? nlohmann::json() : it->second};
      std::unique_ptr<const evalrun::IfevalPrompt> p;
      st = evalrun::IfevalPrompt::Compile(spec, &p);
      if (!st.ok()) Die(st);
      s->prompts.push_back(std::move(p));
    }
    std::fprintf(stderr, "ifeval_fuzzer: %zu instructions from %s\n", s->prompts.size(), dir.c_str());
    return s;
  }();
  return *setup;
}

void CheckVerdict(const evalrun::IfevalVerdict& v, size_t n) {
  Require(v.follow_list.size() == n);
  bool all = true;
  for (bool b : v.follow_list) all = all && b;
  Require(v.follow_all == all);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  GetSetup();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Setup& s = GetSetup();
  const evalrun::IfevalPrompt& p = *s.prompts[data[0] % s.prompts.size()];
  const std::string_view response(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t n = p.instruction_ids().size();
  const evalrun::IfevalVerdict strict = p.EvaluateStrict(s.res, response);
  const evalrun::IfevalVerdict loose = p.EvaluateLoose(s.res, response);
  CheckVerdict(strict, n);
  CheckVerdict(loose, n);
  for (size_t i = 0; i < n; ++i) Require(!strict.follow_list[i] || loose.follow_list[i]);
  return 0;
}
