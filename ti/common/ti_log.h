// The providers' messages, by the instance's debug_svc level (ti_log.cc),
// and the wrapper both providers put around every operation: its entry and
// exit logged at TI_DBG_DEBUG, its failure at TI_DBG_STD, at the level of
// the instance its first handle belongs to, read before the call
// (destroy_ti takes the instance away).
#pragma once
#include <sdp_ti.h>

namespace nicsim::ti_core {

// Logs the message when `need` is at most `current` (an instance's
// debug_svc level): TI_DBG_OFF fatal, TI_DBG_STD errors, TI_DBG_VERBOSE
// information, TI_DBG_DEBUG routine entry and exit.
void log_at(ti_debug_level_t current, ti_debug_level_t need, const char* format, ...)
    __attribute__((format(printf, 3, 4)));
const char* debug_level_name(ti_debug_level_t level);

template <class LevelOf, class F, class First, class... Rest>
ti_status_t logged_call(const char* name, LevelOf level_of_first, F fn, First first, Rest... rest) {
  const ti_debug_level_t level = level_of_first(first);
  log_at(level, TI_DBG_DEBUG, "%s: entry", name);
  const ti_status_t s = fn(first, rest...);
  if (s != TI_SUCCESS && s != TI_PENDING) log_at(level, TI_DBG_STD, "%s failed: %s", name, ti_status_to_str(s));
  log_at(level, TI_DBG_DEBUG, "%s: exit, %s", name, ti_status_to_str(s));
  return s;
}

}  // namespace nicsim::ti_core
