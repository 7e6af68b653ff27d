// Preparing the parts: before the server what needs none (data, selection,
// prompts; a procedure's checks), after it what needs its context or its
// tokenizer; every item then checked against the context of one request
// (evals/run/context_check.h) before any request.
#include "evals/base/exit_codes.h"
#include "evals/run/context_check.h"
#include "evals/run/run_steps.h"
#include "evals/server/server_tokenizer.h"

namespace evalrun::run_internal {
namespace {

PartContext ContextFor(const Job& job, const PartRun& r) {
  PartContext ctx;
  ctx.card = &job.card;
  ctx.settings = &r.settings;
  ctx.request = &r.request;
  ctx.data_dir = job.data_dir;
  ctx.limit = job.limit;
  ctx.unsafe_exec = job.unsafe_exec;
  ctx.sandbox_min = job.sandbox_min;
  return ctx;
}

// The server's tokenizer for a part that needs it; a byte-based estimate
// where the server cannot count and the part allows it.
StepExit MakeTokenizer(const Job& job, const Server& server, const PartRun& r, std::unique_ptr<Tokenizer>* out,
                       FILE* err) {
  const Card& card = job.card;
  std::unique_ptr<Tokenizer> tok =
      MakeServerTokenizer(MakeHttpTransport(server.origin, job.token), card.server, r.request.thinking);
  int tokens = 0;  // whether the server counts at all: one word asked
  Status st = tok->Count("check", &tokens);
  if (!st.ok()) {
    if (!AcceptsEstimatedTokens(*r.def, r.settings))
      return Stop(err,
                  Status::Unavailable("part " + r.name + ": " + st.message() + ". Set parts." + r.name + "." +
                                      kAllowEstimatedTokensKey +
                                      " to use a byte-based estimate with a safety margin instead"),
                  kExitUnreachable);
    std::fprintf(err, "evalrun: %s: warning: %s; using the byte-based estimate with a safety margin (parts.%s.%s)\n",
                 r.name.c_str(), st.message().c_str(), r.name.c_str(), kAllowEstimatedTokensKey);
    tok = MakeEstimatingTokenizer();
  }
  *out = std::move(tok);
  return std::nullopt;
}

// The part's tokenizer, failing every count once the run is cancelled:
// a part's preparation loops (sizing prompts by tokens) return at their next count.
class CancellingTokenizer : public Tokenizer {
 public:
  CancellingTokenizer(Tokenizer* inner, const CancelToken* cancel) : inner_(inner), cancel_(cancel) {}
  Status Count(std::string_view text, int* n) override {
    if (cancel_->cancelled()) return Interrupted();
    return inner_->Count(text, n);
  }
  Status CountChat(std::string_view content, int* n) override {
    if (cancel_->cancelled()) return Interrupted();
    return inner_->CountChat(content, n);
  }
  int calls() const override { return inner_->calls(); }

 private:
  static Status Interrupted() { return Status::Cancelled("interrupted"); }
  Tokenizer* inner_;
  const CancelToken* cancel_;
};

// Ctrl-C or SIGTERM before the first request: nothing to keep.
StepExit Interrupted(const PartRun& r, FILE* err) {
  return Stop(err,
              Status::Cancelled("interrupted during preparation (part " + r.name +
                                "); no request was sent. Run the same command again"),
              kExitInterrupted);
}

// Items that cannot fit one request refused (exit 1) or, where the part
// says so, left out and listed in info.skipped with what FitToContext left out.
StepExit CheckItems(const Job& job, int64_t request_ctx, PartRun* r, FILE* err) {
  nlohmann::json& skipped = r->context.skipped;
  Status st = CheckItemsFit(r->name, request_ctx, r->context.skip_items, &r->prepared.items, &skipped);
  if (!st.ok()) return Stop(err, st, kExitBadInput);
  if (!skipped.empty()) {
    nlohmann::json& info_skipped = r->prepared.info["skipped"];
    if (!info_skipped.is_array()) info_skipped = nlohmann::json::array();
    for (const auto& s : skipped) info_skipped.push_back(s);
  }
  for (size_t i = 0; i < r->prepared.items.size(); ++i) r->index_by_id[r->prepared.items[i].id] = static_cast<int>(i);
  for (const auto& n : r->prepared.notes) std::fprintf(err, "evalrun: %s: %s\n", r->name.c_str(), n.c_str());
  r->dir = job.dir.path() + "/" + r->name;
  return std::nullopt;
}

}  // namespace

StepExit PrepareBeforeServer(Job* job, CancelToken* cancel, FILE* err) {
  for (auto& r : job->parts) {
    if (r.def->needs_tokenizer) continue;
    if (cancel->cancelled()) return Interrupted(r, err);
    Status st = r.part->Prepare(ContextFor(*job, r), &r.prepared);
    if (!st.ok()) return Stop(err, st.Prefixed("part " + r.name), kExitBadInput);
  }
  for (auto& r : job->procedures) {
    if (cancel->cancelled()) return Interrupted(r, err);
    Status st = r.procedure->Check(ContextFor(*job, r));
    if (!st.ok()) return Stop(err, st.Prefixed("part " + r.name), kExitBadInput);
  }
  return std::nullopt;
}

StepExit PrepareAfterServer(Job* job, const Server& server, CancelToken* cancel, FILE* err) {
  // The context one request can have: every length and counted prompt is
  // checked against it before any request.
  const int64_t request_ctx = server.props.n_ctx;
  for (auto& r : job->parts) {
    Status st = r.part->FitToContext(request_ctx, &r.settings, &r.context);
    for (const auto& s : r.context.skipped)
      std::fprintf(err, "evalrun: %s: skipped: %s\n", r.name.c_str(), s["reason"].get<std::string>().c_str());
    if (!st.ok()) return Stop(err, Status::InvalidInput(job->card.path + ": " + st.message()), kExitBadInput);
  }
  for (auto& r : job->parts) {
    if (!r.def->needs_tokenizer) continue;
    if (cancel->cancelled()) return Interrupted(r, err);
    std::unique_ptr<Tokenizer> tok;
    if (StepExit e = MakeTokenizer(*job, server, r, &tok, err)) return e;
    CancellingTokenizer counted(tok.get(), cancel);
    PartContext ctx = ContextFor(*job, r);
    ctx.tokenizer = &counted;
    ctx.server = server.Transports(job->token);
    std::fprintf(err, "evalrun: %s: preparing prompts with the server's tokenizer\n", r.name.c_str());
    Status st = r.part->Prepare(ctx, &r.prepared);
    if (cancel->cancelled()) return Interrupted(r, err);
    if (!st.ok()) return Stop(err, st.Prefixed("part " + r.name), kExitBadInput);
  }
  for (auto& r : job->parts)
    if (StepExit e = CheckItems(*job, request_ctx, &r, err)) return e;
  return std::nullopt;
}

}  // namespace evalrun::run_internal
