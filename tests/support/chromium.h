// Headless Chromium for the tests of evalrun's HTML pages (report.html, the
// page of `compare --html`): the DOM after the page's scripts ran, and a
// screenshot. Chromium is $EVALRUN_CHROMIUM, else /usr/bin/chromium; it is
// started with its own profile folder, no sandbox, no GPU and no network
// services, under `timeout 120`, and waited for.
#ifndef EVALRUN_TESTS_SUPPORT_CHROMIUM_H_
#define EVALRUN_TESTS_SUPPORT_CHROMIUM_H_

#include <cstdint>
#include <string>

namespace evalrun::testing {

std::string ChromiumPath();

// Runs Chromium on `url` with `extra` flags, its profile in `profile` (its
// stderr goes to "<profile>.stderr"); *out gets its stdout. Returns its
// exit status (-1 when it could not be run or did not exit).
int RunChromium(const std::string& profile, const std::string& extra, const std::string& url, std::string* out);

// The DOM of `url` after its scripts ran (--dump-dom). False, with
// Chromium's stderr in *error, when it failed.
bool DumpDom(const std::string& profile, const std::string& url, std::string* dom, std::string* error);

// Width and height from a PNG's IHDR; false when `bytes` is not a PNG.
bool PngSize(const std::string& bytes, uint32_t* width, uint32_t* height);

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_CHROMIUM_H_
