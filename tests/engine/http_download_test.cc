// The HTTP client the fetch downloads with (evals/server/http.h): URLs and
// redirects, resumed and failed downloads against the local mirror
// (datasets_fetch_mirror.h), and HTTPS against a local TLS server.
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <stdlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>

#include <gtest/gtest.h>

#include "evals/base/sha256.h"
#include "evals/server/http.h"
#include "tests/engine/datasets_fetch_mirror.h"
#include "tests/support/run_binary.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace evalrun {
namespace {

namespace fs = std::filesystem;
using namespace fetch_testing;  // datasets_fetch_mirror.h
using testing::ReadFile;
using testing::TempDir;

TEST(HttpDownloadTest, RedirectsAreFollowedButTheTokenStaysWithItsHost) {
  MirrorServer server(testing::DatasetsDir());
  HttpResponse r = HttpGetUrl(server.url() + "/r/" + kIfeval, {}, "secret-token", 10);
  ASSERT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(Sha256Hex(r.body), kIfevalSha);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].host, "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(reqs[0].authorization, "Bearer secret-token");
  EXPECT_EQ(reqs[1].host, "localhost:" + std::to_string(server.port()));
  EXPECT_EQ(reqs[1].authorization, "");

  TempDir dir("evalrun_fetch");
  HttpDownloadInfo info;
  int64_t last_got = 0, last_total = 0;
  Status st = HttpDownload(server.url() + "/r/" + kIfeval, dir.path() + "/x.part", 0, "", [&](int64_t g, int64_t t) {
    last_got = g;
    last_total = t;
  }, &info);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(info.status, 200);
  EXPECT_EQ(info.final_url, "http://localhost:" + std::to_string(server.port()) + "/" + kIfeval);
  EXPECT_EQ(last_got, 207111);
  EXPECT_EQ(last_total, 207111);
  EXPECT_EQ(Sha256Hex(ReadFile(dir.path() + "/x.part")), kIfevalSha);

  // Already whole: the server answers 416 for a range past the end.
  st = HttpDownload(server.url() + "/" + kIfeval, dir.path() + "/x.part", 207111, "", nullptr, &info);
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(info.status, 416);
  EXPECT_EQ(info.bytes_written, 0);
  EXPECT_EQ(fs::file_size(dir.path() + "/x.part"), 207111u);

  st = HttpDownload(server.url() + "/no/such/file", dir.path() + "/y.part", 0, "", nullptr, &info);
  EXPECT_EQ(st.code(), Status::Code::kServerError);
  EXPECT_EQ(st.message(), server.url() + "/no/such/file: HTTP 404: Not Found");
  st = HttpDownload("http://127.0.0.1:1/x", dir.path() + "/y.part", 0, "", nullptr, &info);
  EXPECT_EQ(st.code(), Status::Code::kUnavailable);
}

TEST(HttpUrlTest, ParsesAndResolves) {
  HttpUrl u;
  ASSERT_TRUE(ParseHttpUrl("HTTPS://Example.com/a/b?x=1#frag", &u));
  EXPECT_EQ(u.scheme, "https");
  EXPECT_EQ(u.host, "example.com");
  EXPECT_EQ(u.port, 443);
  EXPECT_EQ(u.path, "/a/b?x=1");
  EXPECT_EQ(u.Origin(), "https://example.com");
  ASSERT_TRUE(ParseHttpUrl("http://127.0.0.1:8080", &u));
  EXPECT_EQ(u.path, "/");
  EXPECT_EQ(u.Origin(), "http://127.0.0.1:8080");
  EXPECT_FALSE(ParseHttpUrl("ftp://x/y", &u));
  EXPECT_FALSE(ParseHttpUrl("http://:80/", &u));
  EXPECT_FALSE(ParseHttpUrl("http://u:p@host/", &u));
  ASSERT_TRUE(ParseHttpUrl("https://github.com/o/r/raw/main/f.zip", &u));
  EXPECT_EQ(ResolveLocation(u, "https://raw.githubusercontent.com/o/r/main/f.zip"),
            "https://raw.githubusercontent.com/o/r/main/f.zip");
  EXPECT_EQ(ResolveLocation(u, "//cdn.example/x"), "https://cdn.example/x");
  EXPECT_EQ(ResolveLocation(u, "/o/r/blob/main/f.zip"), "https://github.com/o/r/blob/main/f.zip");
  EXPECT_EQ(ResolveLocation(u, "g.zip"), "https://github.com/o/r/raw/main/g.zip");
}

// HTTPS through OpenSSL against a local TLS server whose self-signed
// certificate is made trusted through $SSL_CERT_FILE.
TEST(HttpDownloadTest, HttpsWorksAndVerifiesTheCertificate) {
  TempDir dir("evalrun_fetch");
  EVP_PKEY* key = EVP_EC_gen("P-256");
  ASSERT_NE(key, nullptr);
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 86400);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  for (auto [nid, value] : {std::pair{NID_subject_alt_name, "IP:127.0.0.1"}, std::pair{NID_basic_constraints, "critical,CA:TRUE"}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    ASSERT_NE(ext, nullptr);
    X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
  }
  ASSERT_GT(X509_sign(cert, key, EVP_sha256()), 0);
  const std::string pem = dir.path() + "/ca.pem";
  FILE* f = std::fopen(pem.c_str(), "w");
  ASSERT_NE(f, nullptr);
  PEM_write_X509(f, cert);
  std::fclose(f);

  httplib::SSLServer tls(cert, key);
  ASSERT_TRUE(tls.is_valid());
  const std::string body = ReadFile(testing::DatasetsDir() + "/" + kIfeval);
  tls.Get("/f", [&](const httplib::Request&, httplib::Response& res) { res.set_content(body, "text/plain"); });
  int port = tls.bind_to_any_port("127.0.0.1");
  std::thread t([&] { tls.listen_after_bind(); });

  const std::string url = "https://127.0.0.1:" + std::to_string(port) + "/f";

  // Untrusted first (the system store does not know this certificate).
  const char* old = std::getenv("SSL_CERT_FILE");
  std::string saved = old ? old : "";
  ASSERT_EQ(setenv("SSL_CERT_FILE", (dir.path() + "/none.pem").c_str(), 1), 0);
  Status st = HttpDownload(url, dir.path() + "/a.part", 0, "", nullptr, nullptr);
  EXPECT_EQ(st.code(), Status::Code::kUnavailable);
  EXPECT_NE(st.message().find("TLS"), std::string::npos) << st.ToString();

  ASSERT_EQ(setenv("SSL_CERT_FILE", pem.c_str(), 1), 0);
  st = HttpDownload(url, dir.path() + "/b.part", 0, "", nullptr, nullptr);
  if (old) setenv("SSL_CERT_FILE", saved.c_str(), 1); else unsetenv("SSL_CERT_FILE");
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(Sha256Hex(ReadFile(dir.path() + "/b.part")), kIfevalSha);

  tls.stop();
  t.join();
  X509_free(cert);
  EVP_PKEY_free(key);
}

}  // namespace
}  // namespace evalrun
