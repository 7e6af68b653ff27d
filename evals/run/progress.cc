#include "evals/run/progress.h"

#include <cmath>

#include "evals/base/thread_name.h"

namespace evalrun {

Progress::Progress(std::string part, int total, int already, int slots, const PoolStats* stats,
                   FILE* out, bool tty)
    : part_(std::move(part)), total_(total), already_(already), slots_(slots), stats_(stats),
      out_(out), tty_(tty), start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() { Finish(); }

void Progress::Start() {
  thread_ = std::thread([this] {
    NameThisThread("evalrun-status");  // the progress line
    Loop();
  });
}

void Progress::OnAnswered(bool failed) {
  std::lock_guard<std::mutex> l(mu_);
  if (failed) ++failed_;
  else ++done_;
}

void Progress::OnScored(double score, bool cut_off) {
  std::lock_guard<std::mutex> l(mu_);
  ++scored_;
  score_sum_ += score;
  cut_ += cut_off;
}

std::string Progress::Line() const {
  std::lock_guard<std::mutex> l(mu_);
  double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  int done = already_ + done_;
  double rate = el > 0 ? done_ / el : 0;
  int left = total_ - done - failed_;
  char eta[32] = "--";
  if (rate > 0 && left > 0) {
    int s = static_cast<int>(left / rate);
    std::snprintf(eta, sizeof eta, "%dh%02dm%02ds", s / 3600, s / 60 % 60, s % 60);
  } else if (left <= 0) {
    std::snprintf(eta, sizeof eta, "0s");
  }
  int inflight = stats_ ? stats_->in_flight.load() : 0;
  std::string per_endpoint;
  if (pool_ && pool_->endpoint_count() > 1) {
    for (size_t e = 0; e < pool_->endpoint_count(); ++e)
      per_endpoint += (e ? " " : " [") + std::to_string(pool_->endpoint_stats(e).in_flight.load()) + "/" +
                      std::to_string(pool_->endpoint(e).slots);
    per_endpoint += "]";
  }
  // Answers waiting for the scoring stage (slow scorers: code run in a sandbox).
  const std::string scoring = scored_ < done_ ? " | scoring " + std::to_string(done_ - scored_) : "";
  char buf[320];
  std::snprintf(buf, sizeof buf, "%s %d/%d | in flight %d/%d%s | %.2f answers/s | ETA %s | score %.1f%% | cut-off %d%s%s",
                part_.c_str(), done, total_, inflight, slots_, per_endpoint.size() < 120 ? per_endpoint.c_str() : "",
                rate, eta, scored_ ? 100.0 * score_sum_ / scored_ : 0.0, cut_, scoring.c_str(),
                failed_ ? (" | failed " + std::to_string(failed_)).c_str() : "");
  return buf;
}

void Progress::Loop() {
  std::unique_lock<std::mutex> l(mu_);
  auto last_plain = std::chrono::steady_clock::now();
  while (!stop_) {
    cv_.wait_for(l, std::chrono::seconds(1));
    if (stop_) break;
    int done = already_ + done_;
    int decile = total_ ? done * 10 / total_ : 10;
    auto now = std::chrono::steady_clock::now();
    bool plain_due = decile > last_decile_ || now - last_plain > std::chrono::seconds(60);
    if (!tty_ && !plain_due) continue;
    l.unlock();
    std::string line = Line();
    if (tty_) std::fprintf(out_, "\r\033[K%s", line.c_str());
    else std::fprintf(out_, "%s\n", line.c_str());
    std::fflush(out_);
    l.lock();
    if (!tty_) last_decile_ = decile, last_plain = now;
  }
}

void Progress::Finish() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::string line = Line();
  std::fprintf(out_, tty_ ? "\r\033[K%s\n" : "%s\n", line.c_str());
  std::fflush(out_);
}

}  // namespace evalrun
