// Builders and parsers of the CM's messages (cm_messages.cc). Include
// rdma/ib_verbs.h before this header.
#pragma once
#include <cstddef>
#include <cstdint>

#include "cm/core/cm.h"
#include "cm/core/mad.h"

namespace nicsim::cm {

void build_req(std::uint8_t* m, std::uint64_t tid, const Conn& c, std::uint64_t ca_guid);
void parse_req(const std::uint8_t* m, Conn& c);
void build_rep(std::uint8_t* m, std::uint64_t tid, const Conn& c, std::uint64_t ca_guid);
void parse_rep(const std::uint8_t* m, Conn& c);
void build_rtu(std::uint8_t* m, std::uint64_t tid, const Conn& c);
void build_rej(std::uint8_t* m, std::uint64_t tid, const Conn& c, std::uint8_t msg, std::uint16_t reason,
               const std::uint8_t* priv, std::size_t len);
void build_mra(std::uint8_t* m, std::uint64_t tid, const Conn& c, std::uint8_t service_timeout);
void build_dreq(std::uint8_t* m, std::uint64_t tid, const Conn& c);
void build_drep(std::uint8_t* m, std::uint64_t tid, const Conn& c);

}  // namespace nicsim::cm
