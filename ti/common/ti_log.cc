// The providers' messages, by the instance's debug_svc level. Each message
// has the least level that shows it, as the interface lists them: fatal
// (TI_DBG_OFF: always), errors (TI_DBG_STD), warnings and information
// (TI_DBG_VERBOSE: connection steps, registrations), routine entry and
// exit (TI_DBG_DEBUG). A message shown goes to the trace (component "api",
// event "ti_log", with its level and text), and to stderr when
// NICSIM_VERBOSE is set, as programs' nicsim_log does.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "core/calendar.h"
#include "core/sim.h"
#include "host/host.h"
#include "ti/common/ti_log.h"
#include "trace/trace.h"

namespace nicsim::ti_core {

const char* debug_level_name(ti_debug_level_t level) {
  switch (level) {
    case TI_DBG_OFF:
      return "fatal";
    case TI_DBG_STD:
      return "error";
    case TI_DBG_VERBOSE:
      return "info";
    default:
      return "debug";
  }
}

void log_at(ti_debug_level_t current, ti_debug_level_t need, const char* format, ...) {
  if (need > current) return;
  host::Host* h = host::Host::current_host();
  if (!h) return;
  char buf[512];
  va_list ap;
  va_start(ap, format);
  std::vsnprintf(buf, sizeof buf, format, ap);
  va_end(ap);
  Sim& sim = Sim::get();
  const std::uint32_t dev = h->node_id();
  if (sim.tracer().on(dev, Component::api))
    sim.tracer().record(Calendar::now(), dev, Component::api, "ti_log",
                        {{"level", debug_level_name(need)}, {"text", buf}});
  if (std::getenv("NICSIM_VERBOSE"))
    std::fprintf(stderr, "[%s %s] ti: %s\n", format_time(Calendar::now()).c_str(), h->name(), buf);
}

}  // namespace nicsim::ti_core
