#include "evals/benchmarks/speed/speed_steps.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <thread>

#include "evals/base/clock.h"
#include "evals/benchmarks/speed/speed_results.h"
#include "evals/server/client.h"

namespace evalrun {
namespace {

// Releases the threads of a conc round together.
struct StartGate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  double t0 = 0;
  void Open() {
    {
      std::lock_guard<std::mutex> l(mu);
      t0 = RealClock::Default()->MonotonicSeconds();
      open = true;
    }
    cv.notify_all();
  }
  double Wait() {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [this] { return open; });
    return t0;
  }
};

nlohmann::json FailedRecord(const SpeedRequest& req, const std::string& error) {
  StreamedReply r;
  r.status = CallStatus::kFailed;
  r.error = error;
  return RequestRecord(req, r, 0);
}

double DoneAt(const nlohmann::json& rec) {
  const nlohmann::json& t = rec["times"];
  return t["done_s"].is_number() ? t["send_s"].get<double>() + t["done_s"].get<double>() : 0;
}

}  // namespace

SpeedRunner::SpeedRunner(const SpeedOptions& o, Deps deps) : o_(o), deps_(std::move(deps)) {}

Status SpeedRunner::Build(const std::string& step, const std::string& role, const std::string& prompt_id, int target,
                          int max_tokens, SpeedRequest* out) {
  out->step = step;
  out->role = role;
  out->prompt_id = prompt_id;
  out->target_prompt_tokens = target;
  out->max_tokens = max_tokens;
  out->salt = SpeedSalt(deps_.nonce, ++salts_);
  out->seq = salts_;
  const auto key = std::make_pair(prompt_id, target);
  const auto hint = hints_.find(key);
  ExactPrompt p;
  Status st = FitExactPrompt(deps_.tokenizer.get(), out->salt, SpeedTaskText(prompt_id), target,
                             hint == hints_.end() ? nullptr : &hint->second, &p);
  if (!st.ok()) return st.Prefixed(step + ": a prompt of " + std::to_string(target) + " tokens");
  out->message = std::move(p.message);
  p.message.clear();
  hints_[key] = std::move(p);
  return Status::Ok();
}

nlohmann::json SpeedRunner::Send(SpeedSender* sender, const SpeedRequest& req, double round_start) {
  Prompt prompt;
  prompt.messages.push_back({"user", req.message});
  prompt.params = o_.params;
  prompt.params.max_tokens = req.max_tokens;
  prompt.params.cache_prompt = false;
  const double timeout = RequestTimeoutSeconds(deps_.server, prompt);
  const double send_s = RealClock::Default()->MonotonicSeconds() - round_start;
  const StreamedReply reply = sender->Send(prompt, SpeedExtra(), timeout, deps_.cancel);
  nlohmann::json rec = RequestRecord(req, reply, send_s);
  std::lock_guard<std::mutex> l(sink_mu_);
  if (deps_.sink) deps_.sink(rec);
  if (deps_.request_sink)  // what was sent, in order: a refused chat stream, the route it took
    for (const nlohmann::json& line : RequestBodyRecords(req, reply)) deps_.request_sink(line);
  return rec;
}

Status SpeedRunner::SendSingle(const std::string& step, const std::string& role, const std::string& prompt_id,
                               int target, int max_tokens, nlohmann::json* record) {
  SpeedRequest req;
  EVALRUN_RETURN_IF_ERROR(Build(step, role, prompt_id, target, max_tokens, &req));
  if (!sender_) sender_ = deps_.senders();
  *record = Send(sender_.get(), req, RealClock::Default()->MonotonicSeconds());
  return Status::Ok();
}

Status SpeedRunner::RunRound(const SpeedStep& step, int attempt, int round, std::vector<nlohmann::json>* records,
                             double* wall_s, int* peak) {
  const int n = step.concurrency;
  std::vector<SpeedRequest> reqs(n);
  for (int i = 0; i < n; ++i) {
    const std::string& id = step.prompt_ids[((round - 1) * n + i) % step.prompt_ids.size()];
    Status st = Build(step.name, "measured", id, step.target_prompt_tokens, step.max_tokens, &reqs[i]);
    reqs[i].attempt = attempt;
    reqs[i].round = round;
    reqs[i].concurrency = n;
    if (!st.ok()) {
      records->push_back(FailedRecord(reqs[i], st.message()));
      if (deps_.sink) deps_.sink(records->back());
      return st;
    }
  }
  std::vector<nlohmann::json> got(n);
  if (n == 1) {
    if (!sender_) sender_ = deps_.senders();
    got[0] = Send(sender_.get(), reqs[0], RealClock::Default()->MonotonicSeconds());
    *peak = std::max(*peak, 1);
  } else {
    std::vector<std::unique_ptr<SpeedSender>> senders;
    for (int i = 0; i < n; ++i) senders.push_back(deps_.senders());
    StartGate gate;
    std::atomic<int> in_flight{0}, most{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i)
      threads.emplace_back([&, i] {
        const double t0 = gate.Wait();
        const int now = ++in_flight;
        for (int m = most.load(); now > m && !most.compare_exchange_weak(m, now);) {}
        got[i] = Send(senders[i].get(), reqs[i], t0);
        --in_flight;
      });
    gate.Open();
    for (auto& t : threads) t.join();
    *peak = std::max(*peak, most.load());
  }
  double wall = 0;
  for (auto& rec : got) {
    wall = std::max(wall, DoneAt(rec));
    records->push_back(std::move(rec));
  }
  *wall_s = wall;
  return Status::Ok();
}

Status SpeedRunner::RunAttempt(const SpeedStep& step, int attempt, nlohmann::json* attempt_json,
                               std::vector<nlohmann::json>* records, std::vector<double>* walls, int* peak) {
  if (deps_.guard) deps_.guard->Begin();
  Status st = Status::Ok();
  for (int round = 1; round <= step.rounds && st.ok(); ++round) {
    if (deps_.cancel && deps_.cancel->cancelled()) st = Status::Cancelled("speed: interrupted");
    double wall = 0;
    if (st.ok()) st = RunRound(step, attempt, round, records, &wall, peak);
    walls->push_back(wall);
  }
  std::vector<LoadSample> samples = deps_.guard ? deps_.guard->End() : std::vector<LoadSample>{};
  const GuardDecision d = deps_.guard ? deps_.guard->Decide(samples) : GuardDecision{};
  nlohmann::json& a = *attempt_json;
  a["attempt"] = attempt;
  a["requests"] = records->size();
  a["disturbed"] = d.disturbed;
  a["why"] = d.why.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.why);
  a["longest_disturbed_run"] = d.longest_run;
  a["load_samples"] = nlohmann::json::array();
  for (const LoadSample& s : samples) a["load_samples"].push_back(s.ToJson());
  a["error"] = st.ok() ? nlohmann::json(nullptr) : nlohmann::json(st.message());
  return st;
}

Status SpeedRunner::RunStep(const SpeedStep& step, nlohmann::json* out) {
  nlohmann::json& s = *out;
  s = SpeedStepJson(step);
  s["attempts"] = nlohmann::json::array();
  s["result"] = nullptr;
  s["marks"] = nlohmann::json::array();
  s["disturbed"] = false;
  if (!step.refused.empty()) return Status::Ok();
  const int tries = deps_.guard && deps_.guard->active() ? std::max(1, o_.guard_tries) : 1;
  std::vector<nlohmann::json> records;
  std::vector<double> walls;
  int peak = 0;
  Status st = Status::Ok();
  for (int attempt = 1; attempt <= tries; ++attempt) {
    records.clear();
    walls.clear();
    peak = 0;
    nlohmann::json a;
    st = RunAttempt(step, attempt, &a, &records, &walls, &peak);
    s["attempts"].push_back(a);
    if (st.code() == Status::Code::kCancelled) return st;
    if (!a["disturbed"].get<bool>() || !st.ok()) break;
    if (deps_.log)
      deps_.log("speed: " + step.name + ": attempt " + std::to_string(attempt) + " disturbed by load (" +
                a["why"].get<std::string>() + ")" + (attempt < tries ? "; repeating" : ""));
  }
  s["disturbed"] = s["attempts"].back()["disturbed"];
  s["result"] = SummarizeStep(step, records, walls, peak);
  s["marks"] = CollectMarks(records);
  if (s["disturbed"].get<bool>())
    s["marks"].push_back("still disturbed by load after " + std::to_string(tries) + " tries: " +
                         s["attempts"].back()["why"].get<std::string>());
  if (!st.ok()) s["marks"].push_back("failed: " + st.message());
  return Status::Ok();
}

}  // namespace evalrun
