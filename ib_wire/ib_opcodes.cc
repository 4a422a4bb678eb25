#include "ib_wire/ib_opcodes.h"

namespace nicsim::ib {

#define NICSIM_IB_NAME_CASE(name) \
  case name:                      \
    return #name;

const char* transport_name(Transport t) {
  using enum Transport;
  switch (t) { NICSIM_IB_TRANSPORTS(NICSIM_IB_NAME_CASE) }
  return "?";
}

const char* op_name(Op o) {
  using enum Op;
  switch (o) { NICSIM_IB_OPS(NICSIM_IB_NAME_CASE) }
  return "?";
}

const char* position_name(Position p) {
  using enum Position;
  switch (p) { NICSIM_IB_POSITIONS(NICSIM_IB_NAME_CASE) }
  return "?";
}

const char* ext_name(Ext e) {
  switch (e) {
#define NICSIM_IB_EXT_NAME_CASE(name) \
  case Ext::name:                     \
    return name::kName;
    NICSIM_IB_EXTS(NICSIM_IB_EXT_NAME_CASE)
#undef NICSIM_IB_EXT_NAME_CASE
  }
  return "?";
}

}  // namespace nicsim::ib
