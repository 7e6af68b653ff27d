#include "tests/support/chromium.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace evalrun::testing {

std::string ChromiumPath() {
  if (const char* env = std::getenv("EVALRUN_CHROMIUM"); env && *env) return env;
  return "/usr/bin/chromium";
}

int RunChromium(const std::string& profile, const std::string& extra, const std::string& url, std::string* out) {
  const std::string cmd = "timeout 120 '" + ChromiumPath() +
                          "' --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
                          "--disable-background-networking --disable-component-update --disable-sync "
                          "--user-data-dir='" + profile + "' " + extra + " '" + url + "' 2>'" + profile +
                          ".stderr'";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[8192];
  size_t k;
  while ((k = std::fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, k);
  const int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

bool DumpDom(const std::string& profile, const std::string& url, std::string* dom, std::string* error) {
  dom->clear();
  if (RunChromium(profile, "--dump-dom", url, dom) == 0) return true;
  std::ifstream f(profile + ".stderr", std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  *error = ss.str();
  return false;
}

bool PngSize(const std::string& bytes, uint32_t* width, uint32_t* height) {
  if (bytes.size() < 24 || bytes.compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) != 0 ||
      bytes.compare(12, 4, "IHDR") != 0)
    return false;
  auto be32 = [&](size_t at) {
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
    return v;
  };
  *width = be32(16);
  *height = be32(20);
  return true;
}

}  // namespace evalrun::testing
