// libsystemc.so's own main() calls sc_main, so the library needs one to
// link; the fuzz targets run from libFuzzer's main() and never call it.
extern "C" int sc_main(int, char**) { return 0; }
