// sdp_ti.h compiles as C++ too (it carries its extern "C" guard).
#include <sdp_ti.h>

#include <cstddef>

static_assert(TI_NO_STATUS == -1 && TI_SUCCESS == 0 && TI_ERROR == 18);
static_assert(TI_EVENT_NETDEV_ONLINE == 1 && TI_EVENT_PROTO_SHUTDOWN == 41);
static_assert(CN_REQUEST == 0x3232 && CN_MRA == 0x3235);
static_assert(TI_MEM_READ_WRITE == 2 && TI_RES_POOL_RDMA == 1 && TI_ATOMIC_FETCH_ADD == 1);
static_assert(offsetof(ti_data_element_t, p_next_msg) == 0);
static_assert(sizeof(ti_port_t) == 2 && sizeof(ti_region_key_t) == 4);

int ti_headers_check_cxx(ti_ops_t* ops) {
  ti_handle_t h = nullptr;
  return ops->create_ti(&h);
}
