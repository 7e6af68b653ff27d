// What build of evalrun this is: the project version and the git sha of the
// checkout it was built from, as run.json, --version and the bench record
// them. The definitions are generated at every build
// (cmake/write_build_version.cmake), so that a new commit recompiles one
// file, not every object that sees a -D.
//
// Thread-safety: constants.
#ifndef EVALRUN_EVALS_BASE_BUILD_VERSION_H_
#define EVALRUN_EVALS_BASE_BUILD_VERSION_H_

namespace evalrun {

const char* EvalrunVersion();  // "0.x.y"
const char* EvalrunGitSha();   // 12 hex digits, or "unknown"

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_BUILD_VERSION_H_
