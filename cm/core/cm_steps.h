// Steps of the CM protocol shared by its files (cm_protocol.cc,
// cm_passive.cc); CM thread only. Include rdma/ib_verbs.h first.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "cm/core/cm_node.h"

namespace nicsim::cm {

bool in(const Conn& c, std::initializer_list<CmState> states);
// Queues an upcall to the connection's owner; a final one ends the
// consumer's id at once.
void deliver(CmNode& n, Conn& c, Upcall u, const std::uint8_t* priv, std::size_t len);
Tick lifetime(const Conn& c);  // two packet lifetimes of its path
bool to_init(Conn& c);
bool to_rtr(Conn& c);
bool to_rts(Conn& c);
void to_error(Conn& c);
void send_last(CmNode& n, Conn& c);  // (re)sends c.last
void send_req(CmNode& n, Conn& c);
// The connection failed: fire `e`, QP to ERROR, the upcall, state gone.
void fail_active(CmNode& n, Conn& c, CmEvent e, Upcall u, const std::uint8_t* priv, std::size_t len);

}  // namespace nicsim::cm
