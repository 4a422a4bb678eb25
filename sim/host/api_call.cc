#include "host/api_call.h"

#include "host/host.h"

namespace nicsim::host {

void ApiCalls::notify(const char* name) { observer_(context_, Host::current_host(), name); }

}  // namespace nicsim::host
