#include "tests/support/raw_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace evalrun::testing {
namespace {

bool SameName(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

// Status line and headers of `head` (up to the blank line).
RawReply ParseHead(const std::string& head) {
  RawReply r;
  size_t pos = 0;
  bool first = true;
  while (pos < head.size()) {
    size_t e = head.find('\n', pos);
    if (e == std::string::npos) e = head.size();
    std::string line = head.substr(pos, e - pos);
    pos = e + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      if (first) continue;
      break;
    }
    if (first) {
      first = false;
      size_t sp = line.find(' ');
      r.status = sp == std::string::npos ? 0 : std::atoi(line.c_str() + sp + 1);
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string v = line.substr(colon + 1);
    if (!v.empty() && v[0] == ' ') v.erase(0, 1);
    r.headers.emplace_back(line.substr(0, colon), v);
  }
  return r;
}

}  // namespace

std::string RawReply::Header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (SameName(k, name)) return v;
  return "";
}

std::vector<std::string> RawReply::HeaderNames() const {
  std::vector<std::string> out;
  for (const auto& h : headers) out.push_back(h.first);
  return out;
}

RawReply ParseHeadersFile(const std::string& text) { return ParseHead(text); }

RawHttp::~RawHttp() { Close(); }

bool RawHttp::Connect(int port) {
  Close();
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    Close();
    return false;
  }
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return true;
}

void RawHttp::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buf_.clear();
}

bool RawHttp::Send(const std::string& method, const std::string& path, const std::string& body) {
  if (fd_ < 0) return false;
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  if (!body.empty() || method == "POST")
    req += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  req += "\r\n" + body;
  std::string_view rest = req;
  while (!rest.empty()) {
    ssize_t n = ::send(fd_, rest.data(), rest.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    rest.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool RawHttp::Fill(double timeout_s) {
  if (fd_ < 0) return false;
  pollfd p{fd_, POLLIN, 0};
  int r;
  do r = ::poll(&p, 1, static_cast<int>(timeout_s * 1000));
  while (r < 0 && errno == EINTR);
  if (r <= 0) return false;
  char tmp[65536];
  ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
  if (n <= 0) return false;
  buf_.append(tmp, static_cast<size_t>(n));
  return true;
}

RawReply RawHttp::Read(double timeout_s) {
  size_t end;
  while ((end = buf_.find("\r\n\r\n")) == std::string::npos)
    if (!Fill(timeout_s)) return RawReply{};
  RawReply r = ParseHead(buf_.substr(0, end + 2));
  buf_.erase(0, end + 4);
  if (r.Header("Transfer-Encoding") == "chunked") {
    for (;;) {
      size_t eol;
      while ((eol = buf_.find("\r\n")) == std::string::npos)
        if (!Fill(timeout_s)) return RawReply{};
      const size_t n = std::strtoul(buf_.c_str(), nullptr, 16);
      while (buf_.size() < eol + 2 + n + 2)
        if (!Fill(timeout_s)) return RawReply{};
      r.body.append(buf_, eol + 2, n);
      buf_.erase(0, eol + 2 + n + 2);
      if (n == 0) break;
    }
    return r;
  }
  const size_t n = std::strtoul(r.Header("Content-Length").c_str(), nullptr, 10);
  while (buf_.size() < n)
    if (!Fill(timeout_s)) return RawReply{};
  r.body = buf_.substr(0, n);
  buf_.erase(0, n);
  return r;
}

RawReply RawHttp::Request(const std::string& method, const std::string& path, const std::string& body,
                          double timeout_s, const std::string& extra_headers) {
  if (!extra_headers.empty()) {
    std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra_headers;
    if (!body.empty() || method == "POST")
      req += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
    req += "\r\n" + body;
    if (fd_ < 0 || ::send(fd_, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size()))
      return RawReply{};
    return Read(timeout_s);
  }
  if (!Send(method, path, body)) return RawReply{};
  return Read(timeout_s);
}

bool RawHttp::ClosedWithin(double timeout_s) {
  if (fd_ < 0) return true;
  if (!buf_.empty()) return false;
  pollfd p{fd_, POLLIN, 0};
  int r;
  do r = ::poll(&p, 1, static_cast<int>(timeout_s * 1000));
  while (r < 0 && errno == EINTR);
  if (r <= 0) return false;
  char c;
  ssize_t n = ::recv(fd_, &c, 1, MSG_PEEK);
  return n <= 0;
}

}  // namespace evalrun::testing
