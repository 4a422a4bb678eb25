// SDP sockets' node parameters: the zero-copy threshold, how long a
// SrcAvail waits for its reader, and the cost of a copy between the user's
// buffer and the socket's.
#include <cstdint>

#include "core/params.h"
#include "core/units.h"
#include "host/host.h"

namespace {

const nicsim::ParamRegistration sdp_params(
    "host", "",
    {
        {"sdp.zcopy_threshold",
         nicsim::UnitKind::Size,
         "64KiB",
         "0B",
         "1GiB",
         {},
         "SDP sockets: sends and receives of at least this many bytes move by RDMA between the users' buffers "
         "(SinkAvail/RdmaWrCompl, SrcAvail/RdmaRdCompl); smaller ones are copied through the socket's buffers. 0B: "
         "always copied"},
        {"sdp.src_avail_timeout",
         nicsim::UnitKind::Time,
         "1s",
         "1us",
         "100s",
         {},
         "SDP sockets: how long a SrcAvail waits for its reader; then the writer cancels it (SrcAvailCancel) and, "
         "once the reader answers SendSm, sends the bytes it did not read by copy"},
        {"cost.sdp_copy",
         nicsim::UnitKind::Time,
         "50ns",
         "0ps",
         "1s",
         {},
         "SDP sockets: a copy between the user's buffer and one of the socket's (the bytes are charged on top at "
         "copy_bandwidth)"},
    });

}  // namespace

extern "C" std::uint64_t sdp_zcopy_threshold(void) {
  nicsim::host::Host* h = nicsim::host::Host::current_host();
  return h ? h->params().size("sdp.zcopy_threshold") : 0;
}

extern "C" std::uint64_t sdp_src_avail_timeout_ns(void) {
  nicsim::host::Host* h = nicsim::host::Host::current_host();
  return h ? h->params().time("sdp.src_avail_timeout") / nicsim::kNs : 0;
}

extern "C" void sdp_charge_copy(std::uint64_t bytes) {
  if (nicsim::host::Host* h = nicsim::host::Host::current_host()) h->work("sdp_copy", bytes);
}
