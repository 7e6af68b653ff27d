#include "evals/sandbox/box_root.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

namespace evalrun {
namespace {

bool IsDir(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// /etc/python3, /etc/python3.11, ...: the interpreter's own configuration.
std::vector<std::string> PythonConfigDirs() {
  std::vector<std::string> dirs;
  DIR* etc = opendir("/etc");
  if (!etc) return dirs;
  while (dirent* e = readdir(etc)) {
    const std::string name = e->d_name;
    if (name.rfind("python3", 0) == 0 && IsDir("/etc/" + name)) dirs.push_back("/etc/" + name);
  }
  closedir(etc);
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

// The merged-usr links (/bin -> usr/bin) or real folders at the top.
void AddTopLevel(std::vector<RootEntry>* entries) {
  for (const char* top : {"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"}) {
    struct stat st;
    if (lstat(top, &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      char target[4096];
      ssize_t n = readlink(top, target, sizeof target - 1);
      if (n > 0) entries->push_back({RootEntry::kSymlink, top, std::string(target, static_cast<size_t>(n))});
    } else if (S_ISDIR(st.st_mode)) {
      entries->push_back({RootEntry::kDir, top, ""});
    }
  }
}

}  // namespace

std::vector<RootEntry> InterpreterRoot(const std::string& interpreter) {
  std::vector<RootEntry> entries = {{RootEntry::kDir, "/usr", ""}};
  AddTopLevel(&entries);
  for (const char* file : {"/etc/ld.so.cache", "/etc/localtime"})
    if (IsFile(file)) entries.push_back({RootEntry::kFile, file, ""});
  if (IsDir("/etc/alternatives")) entries.push_back({RootEntry::kDir, "/etc/alternatives", ""});
  for (const std::string& dir : PythonConfigDirs()) entries.push_back({RootEntry::kDir, dir, ""});
  char real[4096];
  if (realpath(interpreter.c_str(), real) && std::string(real).rfind("/usr/", 0) != 0) {
    std::string prefix = real;
    for (int up = 0; up < 2 && prefix.rfind('/') > 0; ++up) prefix.erase(prefix.rfind('/'));
    entries.push_back({RootEntry::kDir, prefix, ""});
  }
  return entries;
}

const std::vector<std::string>& BoxDevices() {
  static const std::vector<std::string> devices = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                                                   "/dev/urandom"};
  return devices;
}

std::vector<std::string> BwrapRootArgs(const std::vector<RootEntry>& entries) {
  std::vector<std::string> args;
  for (const RootEntry& e : entries) {
    if (e.kind == RootEntry::kSymlink)
      args.insert(args.end(), {"--symlink", e.target, e.path});
    else
      args.insert(args.end(), {"--ro-bind", e.path, e.path});
  }
  return args;
}

}  // namespace evalrun
