#include "evals/base/thread_name.h"

#include <pthread.h>

namespace evalrun {

void NameThisThread(const std::string& name) {
  // The kernel's limit is 16 bytes with the terminating NUL.
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
}

}  // namespace evalrun
