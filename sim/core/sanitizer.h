// Help for the sanitizer build (NICSIM_SANITIZE); no-ops otherwise.
#pragma once

namespace nicsim {

// Tells AddressSanitizer that the calling code runs on the main thread's own
// stack again. For the main thread after sc_start returns; elsewhere (a
// coroutine) it does nothing. See sanitizer.cc for why it is needed.
void sanitizer_on_main_stack();

}  // namespace nicsim
