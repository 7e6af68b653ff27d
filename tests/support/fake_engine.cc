#include "tests/support/fake_engine.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace evalrun::testing {

std::vector<int> FakeServersOnPort(int port) {
  std::vector<int> pids;
  DIR* d = opendir("/proc");
  if (!d) return pids;
  while (dirent* e = readdir(d)) {
    int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::string dir = std::string("/proc/") + e->d_name;
    std::string stat = ReadFile(dir + "/stat");
    auto close_paren = stat.rfind(')');
    if (close_paren == std::string::npos || close_paren + 2 >= stat.size() || stat[close_paren + 2] == 'Z')
      continue;
    std::string cmdline = ReadFile(dir + "/cmdline");
    std::vector<std::string> args;  // NUL-separated
    std::istringstream in(cmdline);
    for (std::string a; std::getline(in, a, '\0');) args.push_back(a);
    if (args.empty() || args[0].find("evalrun-fake-server") == std::string::npos) continue;
    for (size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == "--port" && args[i + 1] == std::to_string(port)) pids.push_back(pid);
  }
  closedir(d);
  return pids;
}

}  // namespace evalrun::testing
