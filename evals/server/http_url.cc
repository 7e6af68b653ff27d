// Absolute http(s) URLs: splitting one (ParseHttpUrl) and resolving a
// redirect's Location against it. Pure functions, no I/O.
#include <algorithm>
#include <cctype>
#include <string>

#include "evals/server/http.h"

namespace evalrun {
namespace {

int DefaultPort(const std::string& scheme) { return scheme == "https" ? 443 : 80; }

}  // namespace

std::string HttpUrl::Origin() const {
  std::string o = scheme + "://" + host;
  if (port != DefaultPort(scheme)) o += ":" + std::to_string(port);
  return o;
}

bool ParseHttpUrl(const std::string& url, HttpUrl* out) {
  size_t sep = url.find("://");
  if (sep == std::string::npos) return false;
  std::string scheme = url.substr(0, sep);
  std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (scheme != "http" && scheme != "https") return false;
  size_t start = sep + 3;
  size_t end = url.find_first_of("/?#", start);
  std::string authority = url.substr(start, end == std::string::npos ? std::string::npos : end - start);
  if (authority.empty() || authority.find('@') != std::string::npos || authority[0] == '[') return false;
  out->scheme = scheme;
  size_t colon = authority.rfind(':');
  if (colon != std::string::npos) {
    std::string port = authority.substr(colon + 1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
      return false;
    out->port = std::stoi(port);
    if (out->port <= 0 || out->port > 65535) return false;
    out->host = authority.substr(0, colon);
  } else {
    out->port = DefaultPort(scheme);
    out->host = authority;
  }
  if (out->host.empty()) return false;
  std::transform(out->host.begin(), out->host.end(), out->host.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string path = end == std::string::npos ? "" : url.substr(end);
  if (size_t hash = path.find('#'); hash != std::string::npos) path.resize(hash);
  if (path.empty() || path[0] != '/') path = "/" + path;
  out->path = path;
  return true;
}

std::string ResolveLocation(const HttpUrl& base, const std::string& location) {
  if (location.find("://") != std::string::npos) return location;
  if (location.rfind("//", 0) == 0) return base.scheme + ":" + location;
  if (!location.empty() && location[0] == '/') return base.Origin() + location;
  std::string dir = base.path.substr(0, base.path.find('?'));
  dir = dir.substr(0, dir.rfind('/') + 1);
  return base.Origin() + dir + location;
}

}  // namespace evalrun
