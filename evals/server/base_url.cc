#include "evals/server/base_url.h"

namespace evalrun {

Status CheckBaseUrl(const std::string& url, std::string* normalized) {
  const std::string got = ", got \"" + url + "\"";
  const char* example = "http://127.0.0.1:8080/v1";
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
    return Status::InvalidInput("expected an http:// or https:// URL, got \"" + url + "\"" +
                                (url.find("://") == std::string::npos && !url.empty()
                                     ? " (did you mean \"http://" + url + "\"?)"
                                     : ""));
  for (unsigned char c : url)
    if (c <= ' ' || c == 0x7f) return Status::InvalidInput("expected a URL without spaces or control characters" + got);
  const size_t host_start = url.find("://") + 3;
  const size_t end = url.find_first_of("/?#", host_start);
  const std::string authority = url.substr(host_start, end == std::string::npos ? std::string::npos : end - host_start);
  if (end != std::string::npos && url.find_first_of("?#", end) != std::string::npos)
    return Status::InvalidInput("expected a base URL without a query or fragment ('?', '#')" + got);
  if (authority.find('@') != std::string::npos)
    return Status::InvalidInput("expected a URL without user info ('user@'); a token goes in the environment "
                                "variable that server.api_key_env names" + got);
  std::string host, port;
  bool has_port = false;
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string::npos) return Status::InvalidInput("expected ']' after an IPv6 address" + got);
    host = authority.substr(0, close + 1);
    const std::string rest = authority.substr(close + 1);
    if (!rest.empty() && rest[0] != ':') return Status::InvalidInput("expected ':port' after the IPv6 address" + got);
    has_port = !rest.empty();
    if (has_port) port = rest.substr(1);
    if (host.size() == 2) host.clear();
  } else {
    const size_t colon = authority.find(':');
    host = authority.substr(0, colon);
    has_port = colon != std::string::npos;
    if (has_port) {
      port = authority.substr(colon + 1);
      if (port.find(':') != std::string::npos)
        return Status::InvalidInput("expected one ':' before the port (an IPv6 address goes in brackets)" + got);
    }
  }
  if (host.empty())
    return Status::InvalidInput(std::string("expected a URL with a host, e.g. ") + example + got);
  if (has_port) {
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(port) < 1 || std::stoi(port) > 65535)
      return Status::InvalidInput("expected a port 1..65535 after ':', got \"" + port + "\" in \"" + url + "\"");
  }
  std::string n = url;
  while (n.size() > host_start && n.back() == '/') n.pop_back();
  *normalized = n;
  return Status::Ok();
}

bool IsLoopbackUrl(const std::string& url) {
  const size_t scheme = url.find("://");
  size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  std::string host;
  if (start < url.size() && url[start] == '[') {
    const size_t close = url.find(']', start);
    host = url.substr(start + 1, close == std::string::npos ? std::string::npos : close - start - 1);
  } else {
    host = url.substr(start, url.find_first_of(":/", start) - start);
  }
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

}  // namespace evalrun
