// The file system a sandboxed program sees, the same at every level of the
// code sandbox (sandbox_level.h): the interpreter's files read-only, and
// nothing else of the host's. One description, three renderings:
//   * bubblewrap's arguments ("namespaces": --ro-bind and --symlink);
//   * the steps of evalrun's own minimal root ("unshare", unshare_child.h:
//     bind mounts and symlinks on a tmpfs, then pivot_root);
//   * the paths of the Landlock rules ("seccomp", "rlimits",
//     landlock_rules.h: read and execute beneath them, nothing elsewhere).
//
// What it holds: /usr and the top-level links or folders of a merged /usr
// (/bin, /sbin, /lib, /lib64, ...), the loader's cache, the time zone, the
// folders the interpreter's libraries resolve through (/etc/alternatives:
// NumPy's BLAS is a link there) and its own configuration (/etc/python3*),
// and the interpreter's prefix when it lives outside /usr. Not there: /etc
// at large, /home, /root, /run, /var, /srv, /opt, /mnt, /tmp, /proc and
// /sys of the host, the project, data, job and card folders.
// Devices (BoxDevices): null, zero, full, random, urandom, read and write.
//
// Thread-safety: pure functions over the host's file system as it is now.
#ifndef EVALRUN_EVALS_SANDBOX_BOX_ROOT_H_
#define EVALRUN_EVALS_SANDBOX_BOX_ROOT_H_

#include <string>
#include <vector>

namespace evalrun {

struct RootEntry {
  enum Kind { kDir, kFile, kSymlink } kind = kDir;
  std::string path;    // absolute, the same inside as on the host
  std::string target;  // kSymlink: what the link holds
};

// The entries for `interpreter` (its real path decides the prefix), each
// only where it exists on the host, in an order that makes parents first.
std::vector<RootEntry> InterpreterRoot(const std::string& interpreter);

// "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom".
const std::vector<std::string>& BoxDevices();

// bubblewrap's arguments for `entries` (--ro-bind, --ro-bind-try, --symlink).
std::vector<std::string> BwrapRootArgs(const std::vector<RootEntry>& entries);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SANDBOX_BOX_ROOT_H_
