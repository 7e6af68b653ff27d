#include "evals/server/server_config.h"

namespace evalrun {

std::string ServerConfig::Origin() const {
  auto scheme_end = base_url.find("://");
  auto path_start = base_url.find('/', scheme_end == std::string::npos ? 0 : scheme_end + 3);
  return path_start == std::string::npos ? base_url : base_url.substr(0, path_start);
}

std::string ServerConfig::PathPrefix() const {
  std::string origin = Origin();
  return base_url.substr(origin.size());
}

ServerConfig ServerConfig::ForEndpoint(size_t k) const {
  ServerConfig one = *this;
  one.endpoints.clear();
  if (k < endpoints.size()) {
    one.base_url = endpoints[k].base_url;
    one.slots = endpoints[k].slots;
    one.api_key_env = endpoints[k].api_key_env;
  }
  return one;
}

}  // namespace evalrun
