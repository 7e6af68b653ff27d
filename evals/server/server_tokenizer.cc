#include "evals/server/server_tokenizer.h"
#include "evals/base/json_bounds.h"

#include <nlohmann/json.hpp>

#include "evals/server/openai_wire.h"

namespace evalrun {
namespace {

constexpr double kTimeout = 300;

class ServerTokenizer : public Tokenizer {
 public:
  ServerTokenizer(std::unique_ptr<HttpTransport> t, const ServerConfig& s, bool thinking)
      : t_(std::move(t)), server_(s), thinking_(thinking) {}

  Status Count(std::string_view text, int* n) override {
    EVALRUN_RETURN_IF_ERROR(Detect());
    if (dialect_ == kLlama) return LlamaTokenize(text, false, n);
    nlohmann::json body = {{"prompt", std::string(text)}, {"add_special_tokens", false}};
    if (!server_.model.empty()) body["model"] = server_.model;
    return OpenAiTokenize(body, n);
  }

  Status CountChat(std::string_view content, int* n) override {
    EVALRUN_RETURN_IF_ERROR(Detect());
    nlohmann::json messages = nlohmann::json::array({{{"role", "user"}, {"content", std::string(content)}}});
    if (dialect_ == kLlama) {
      nlohmann::json reply;
      nlohmann::json body = {{"messages", messages},
                             {"chat_template_kwargs", {{"enable_thinking", thinking_}}}};
      EVALRUN_RETURN_IF_ERROR(PostJson("/apply-template", body, &reply));
      if (!reply.contains("prompt") || !reply["prompt"].is_string())
        return Status::ServerError(server_.Origin() + "/apply-template: reply has no \"prompt\"");
      return LlamaTokenize(reply["prompt"].get<std::string>(), true, n);
    }
    nlohmann::json body = {{"messages", messages}, {"add_generation_prompt", true},
                           {"chat_template_kwargs", {{"enable_thinking", thinking_}}}};
    if (!server_.model.empty()) body["model"] = server_.model;
    return OpenAiTokenize(body, n);
  }

  int calls() const override { return calls_; }

 private:
  enum Dialect { kUnknown, kLlama, kOpenAi };

  Status PostJson(const std::string& path, const nlohmann::json& body, nlohmann::json* out) {
    ++calls_;
    HttpResponse r = t_->Post(path, body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), kTimeout);
    if (!r.transport_ok()) return Status::Unavailable("POST " + server_.Origin() + path + ": " + r.error);
    if (r.status != 200)
      return Status::ServerError("POST " + server_.Origin() + path + ": HTTP " + std::to_string(r.status) + ": " +
                                 ErrorMessageOf(r.body));
    *out = ParseJsonOrDiscarded(r.body);
    if (out->is_discarded() || !out->is_object())
      return Status::ServerError("POST " + server_.Origin() + path + ": reply is not a JSON object");
    return Status::Ok();
  }

  Status LlamaTokenize(std::string_view text, bool add_special, int* n) {
    nlohmann::json reply;
    EVALRUN_RETURN_IF_ERROR(PostJson("/tokenize", {{"content", std::string(text)}, {"add_special", add_special},
                                                   {"parse_special", true}}, &reply));
    if (!reply.contains("tokens") || !reply["tokens"].is_array())
      return Status::ServerError(server_.Origin() + "/tokenize: reply has no \"tokens\" array");
    *n = static_cast<int>(reply["tokens"].size());
    return Status::Ok();
  }

  Status OpenAiTokenize(const nlohmann::json& body, int* n) {
    nlohmann::json reply;
    EVALRUN_RETURN_IF_ERROR(PostJson("/tokenize", body, &reply));
    if (reply.contains("count") && reply["count"].is_number_integer()) {
      *n = reply["count"].get<int>();
      return Status::Ok();
    }
    if (reply.contains("tokens") && reply["tokens"].is_array()) {
      *n = static_cast<int>(reply["tokens"].size());
      return Status::Ok();
    }
    return Status::ServerError(server_.Origin() + "/tokenize: reply has neither \"count\" nor \"tokens\"");
  }

  // llama-server answers /apply-template; vLLM and SGLang do not.
  Status Detect() {
    if (dialect_ != kUnknown) return Status::Ok();
    ++calls_;
    nlohmann::json probe = {{"messages", nlohmann::json::array({{{"role", "user"}, {"content", "hi"}}})}};
    HttpResponse r = t_->Post("/apply-template", probe.dump(), kTimeout);
    if (!r.transport_ok()) return Status::Unavailable("POST " + server_.Origin() + "/apply-template: " + r.error);
    if (r.status == 200) {
      dialect_ = kLlama;
      return Status::Ok();
    }
    nlohmann::json body = {{"messages", probe["messages"]}};
    if (!server_.model.empty()) body["model"] = server_.model;
    ++calls_;
    HttpResponse v = t_->Post("/tokenize", body.dump(), kTimeout);
    if (v.transport_ok() && v.status == 200) {
      dialect_ = kOpenAi;
      return Status::Ok();
    }
    return Status::Unavailable(
        server_.Origin() + " cannot count tokens: neither llama-server's POST /apply-template + /tokenize nor a "
        "vLLM/SGLang-style POST /tokenize answered (HTTP " + std::to_string(r.status) + " / " +
        (v.transport_ok() ? std::to_string(v.status) : v.error) +
        "); evalrun sizes long prompts with the server's own tokenizer");
  }

  std::unique_ptr<HttpTransport> t_;
  ServerConfig server_;
  bool thinking_;
  Dialect dialect_ = kUnknown;
  int calls_ = 0;
};

class EstimatingTokenizer : public Tokenizer {
 public:
  Status Count(std::string_view text, int* n) override {
    *n = Estimate(text.size());
    return Status::Ok();
  }
  Status CountChat(std::string_view content, int* n) override {
    *n = Estimate(content.size()) + 64;
    return Status::Ok();
  }
  int calls() const override { return 0; }

 private:
  static int Estimate(size_t bytes) { return static_cast<int>((bytes + 2) / 3 * 105 / 100); }
};

}  // namespace

std::unique_ptr<Tokenizer> MakeServerTokenizer(std::unique_ptr<HttpTransport> transport,
                                               const ServerConfig& server, bool thinking) {
  return std::make_unique<ServerTokenizer>(std::move(transport), server, thinking);
}

std::unique_ptr<Tokenizer> MakeEstimatingTokenizer() { return std::make_unique<EstimatingTokenizer>(); }

}  // namespace evalrun
