#include "evals/sandbox/sandbox_level.h"

namespace evalrun {

const std::vector<SandboxLevel>& AllSandboxLevels() {
  static const std::vector<SandboxLevel> levels = {SandboxLevel::kNamespaces, SandboxLevel::kUnshare,
                                                   SandboxLevel::kSeccomp, SandboxLevel::kRlimits};
  return levels;
}

const char* SandboxLevelName(SandboxLevel level) {
  switch (level) {
    case SandboxLevel::kNamespaces: return "namespaces";
    case SandboxLevel::kUnshare: return "unshare";
    case SandboxLevel::kSeccomp: return "seccomp";
    case SandboxLevel::kRlimits: return "rlimits";
  }
  return "rlimits";
}

bool ParseSandboxLevel(const std::string& name, SandboxLevel* level) {
  for (SandboxLevel l : AllSandboxLevels())
    if (name == SandboxLevelName(l)) {
      *level = l;
      return true;
    }
  return false;
}

}  // namespace evalrun
