#include "tests/support/fake_transport.h"

#include <utility>

#include <nlohmann/json.hpp>

namespace evalrun::testing {

HttpResponse FakeTransport::Get(const std::string& path, double timeout_s) {
  FakeRequest r;
  r.n = static_cast<int>(requests_.size());
  r.method = "GET";
  r.path = path;
  r.timeout_s = timeout_s;
  requests_.push_back(r);
  return script_(r);
}

HttpResponse FakeTransport::Post(const std::string& path, const std::string& json_body, double timeout_s) {
  FakeRequest r;
  r.n = static_cast<int>(requests_.size());
  r.method = "POST";
  r.path = path;
  r.body = json_body;
  r.timeout_s = timeout_s;
  requests_.push_back(r);
  return script_(r);
}

HttpResponse HttpStatus(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

HttpResponse HttpBroken(std::string error) {
  HttpResponse r;
  r.error = std::move(error);
  return r;
}

std::string ChatReplyBody(const std::string& content, const std::string& finish_reason) {
  nlohmann::json j = {
      {"choices", {{{"index", 0}, {"finish_reason", finish_reason}, {"message", {{"role", "assistant"}, {"content", content}}}}}},
      {"usage", {{"prompt_tokens", 10}, {"completion_tokens", 1}, {"total_tokens", 11}}},
  };
  return j.dump();
}

}  // namespace evalrun::testing
