// The frame of evalrun's self-contained HTML pages (report.html of
// `evalrun report`, the page of `evalrun compare --html`): one stylesheet,
// a Content-Security-Policy that allows no external asset and no network,
// the <head> and the end of the page.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_PUBLISH_HTML_PAGE_H_
#define EVALRUN_EVALS_PUBLISH_HTML_PAGE_H_

#include <string>

namespace evalrun {

// From <!DOCTYPE html> to the opening <main>; `title` is escaped here.
std::string HtmlPageStart(const std::string& title);

// </main>, then `after_main` as it is (the page's scripts, already made
// safe), then </body></html>.
std::string HtmlPageEnd(const std::string& after_main = "");

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_HTML_PAGE_H_
