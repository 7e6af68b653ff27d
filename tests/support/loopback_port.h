// A loopback TCP port for a test's server, or to find nothing listening.
// Tests only.
//
// Thread-safety: safe from any thread.
#ifndef EVALRUN_TESTS_SUPPORT_LOOPBACK_PORT_H_
#define EVALRUN_TESTS_SUPPORT_LOOPBACK_PORT_H_

namespace evalrun::testing {

// A port on 127.0.0.1 nobody listens on now (bound, read and released); 0
// when none could be had.
int FreeLoopbackPort();

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_LOOPBACK_PORT_H_
