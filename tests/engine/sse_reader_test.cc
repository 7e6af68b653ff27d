// SseReader (evals/server/stream.h): events out of a text/event-stream fed
// in pieces split anywhere.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "evals/server/stream.h"

namespace evalrun {
namespace {

struct Seen {
  std::vector<std::string> events;
  int comments = 0;
  bool ok = true;
};

// Feeds `text` cut at the offsets in `cuts` (ascending).
Seen FeedCut(const std::string& text, const std::vector<size_t>& cuts, size_t max_line = size_t{16} << 20) {
  SseReader r(max_line);
  Seen s;
  size_t from = 0;
  auto feed = [&](size_t to) {
    s.ok = r.Feed(std::string_view(text).substr(from, to - from), [&](std::string_view d) {
      s.events.emplace_back(d);
      return true;
    }) && s.ok;
    from = to;
  };
  for (size_t c : cuts) feed(c);
  feed(text.size());
  s.comments = r.comments();
  return s;
}

// llama-server's shape, with what a proxy may add: CRLF, a comment, a
// multi-line event, other fields, a lone CR.
const std::string kStream =
    "data: {\"a\":1}\n\n"
    ": ping\r\n\r\n"
    "data: {\"b\":2}\r\n\r\n"
    "event: message\nid: 7\nretry: 10\ndata: line one\ndata:line two\ndata\n\n"
    ":\n\n"
    "data: cr\r\r"
    "data: [DONE]\n\n";
const std::vector<std::string> kEvents = {"{\"a\":1}", "{\"b\":2}", "line one\nline two\n", "cr", "[DONE]"};

TEST(SseReader, ReadsEventsCommentsAndFields) {
  Seen s = FeedCut(kStream, {});
  EXPECT_TRUE(s.ok);
  EXPECT_EQ(s.events, kEvents);
  EXPECT_EQ(s.comments, 2);
}

TEST(SseReader, TheSameWhereverThePiecesSplit) {
  for (size_t cut = 0; cut <= kStream.size(); ++cut) {
    Seen s = FeedCut(kStream, {cut});
    EXPECT_EQ(s.events, kEvents) << "cut at " << cut;
    EXPECT_EQ(s.comments, 2) << "cut at " << cut;
  }
  for (size_t a = 0; a < kStream.size(); a += 3)
    for (size_t b = a; b < kStream.size(); b += 5) EXPECT_EQ(FeedCut(kStream, {a, b}).events, kEvents) << a << "," << b;
  std::vector<size_t> every;
  for (size_t i = 1; i < kStream.size(); ++i) every.push_back(i);
  Seen bytewise = FeedCut(kStream, every);
  EXPECT_EQ(bytewise.events, kEvents);
  EXPECT_EQ(bytewise.comments, 2);
}

TEST(SseReader, ACrlfSplitBetweenPiecesIsOneLineEnd) {
  // "\r" | "\n\r\n": one line end, then the blank line; not two blank lines.
  Seen s = FeedCut("data: x\r\ndata: y\r\n\r\n", {8});
  EXPECT_EQ(s.events, std::vector<std::string>({"x\ny"}));
}

TEST(SseReader, AnUnfinishedEventIsNotHandedOver) {
  Seen s = FeedCut("data: a\n\ndata: b\n", {});
  EXPECT_EQ(s.events, std::vector<std::string>({"a"}));
}

TEST(SseReader, ALineOverTheLimitFails) {
  const std::string long_line = "data: " + std::string(100, 'x');
  for (std::vector<size_t> cuts : {std::vector<size_t>{}, std::vector<size_t>{10, 50, 90}}) {
    SseReader r(64);
    bool ok = true;
    size_t from = 0;
    cuts.push_back(long_line.size());
    for (size_t c : cuts) {
      ok = r.Feed(std::string_view(long_line).substr(from, c - from), [](std::string_view) { return true; }) && ok;
      from = c;
    }
    EXPECT_FALSE(ok);
    EXPECT_TRUE(r.overflowed());
    EXPECT_FALSE(r.Feed("\n\n", [](std::string_view) { return true; }));
  }
  // Many short data lines of one event count together.
  SseReader r(64);
  std::string many;
  for (int i = 0; i < 20; ++i) many += "data: 0123456789\n";
  EXPECT_FALSE(r.Feed(many, [](std::string_view) { return true; }));
  EXPECT_TRUE(r.overflowed());
}

TEST(SseReader, OnEventFalseStopsTheReader) {
  SseReader r;
  int seen = 0;
  EXPECT_FALSE(r.Feed("data: 1\n\ndata: 2\n\n", [&](std::string_view) { return ++seen < 1; }));
  EXPECT_EQ(seen, 1);
  EXPECT_FALSE(r.Feed("data: 3\n\n", [&](std::string_view) { return ++seen, true; }));
  EXPECT_EQ(seen, 1);
  EXPECT_FALSE(r.overflowed());
}

}  // namespace
}  // namespace evalrun
