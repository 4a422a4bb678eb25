// Tests enter through SystemC (sc_main); they must not link gtest_main.
#include <gtest/gtest.h>
#include <systemc>

#include <cstdlib>

int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

// SystemC prints its banner when its kernel context is created, which happens
// before sc_main; our own main() silences it and then enters SystemC as
// libsystemc's main() would.
int main(int argc, char** argv) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
