// The code sandbox's levels of containment (evals/sandbox/sandbox.h), their
// names as results.json and run.json record them, and which of them
// isolate. Strongest first; each shows the program the interpreter's files
// alone (box_root.h) and installs the same seccomp filter:
//   "namespaces"  bubblewrap's user, network, mount, PID, IPC, UTS and
//                 cgroup namespaces over the minimal read-only root, a
//                 private tmpfs at /tmp;
//   "unshare"     namespaces made by evalrun itself (unshare_child.h)
//                 where bubblewrap is missing or fails: user, network,
//                 mount, PID, IPC, UTS; the same minimal root by
//                 pivot_root, read-only, a tmpfs at /tmp, its own /proc;
//   "seccomp"     no namespaces: Landlock over the same files and a private
//                 folder, the filter (System V IPC refused too), the
//                 rlimits, a process group;
//   "rlimits"     the rlimits and a process group, with Landlock and the
//                 filter where the machine has them: no isolation promised.
// Every level has the rlimits, a control group where one can be made, and
// the end of every process of the run (sandbox.h).
// The first three isolate and are taken without asking; "rlimits" is taken
// only with `--unsafe-exec` (or the card's `unsafe_exec`).
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_SANDBOX_SANDBOX_LEVEL_H_
#define EVALRUN_EVALS_SANDBOX_SANDBOX_LEVEL_H_

#include <string>
#include <vector>

namespace evalrun {

enum class SandboxLevel { kNamespaces = 0, kUnshare = 1, kSeccomp = 2, kRlimits = 3 };

// Strongest first.
const std::vector<SandboxLevel>& AllSandboxLevels();

// "namespaces", "unshare", "seccomp", "rlimits".
const char* SandboxLevelName(SandboxLevel level);

// The level of a name above; false for any other text.
bool ParseSandboxLevel(const std::string& name, SandboxLevel* level);

// True for every level but "rlimits".
inline bool SandboxLevelIsolates(SandboxLevel level) { return level != SandboxLevel::kRlimits; }

// True when `a` contains at least as much as `b`.
inline bool SandboxLevelAtLeast(SandboxLevel a, SandboxLevel b) { return static_cast<int>(a) <= static_cast<int>(b); }

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SANDBOX_SANDBOX_LEVEL_H_
