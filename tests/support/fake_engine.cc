#include "tests/support/fake_engine.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace evalrun::testing {

int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    close(fd);
    return 0;
  }
  close(fd);
  return ntohs(a.sin_port);
}

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
