// dat/udat.h compiles as C++ on its own; the subtype values are DAT 1.1's.
#include <dat/udat.h>

static_assert(DAT_INVALID_HANDLE_IA == 10, "DAT 1.1: DAT_INVALID_HANDLE_IA is 10");
static_assert(DAT_INVALID_HANDLE_EVD_ASYNC == 23, "DAT 1.1 has no SRQ or CSP handle subtypes");
static_assert(DAT_INVALID_ARG1 == 34, "DAT 1.1: DAT_INVALID_ARG1 is 34");
static_assert(DAT_INVALID_STATE_EP_UNCONNECTED == 44, "DAT 1.1: EP state subtypes start at 44");
static_assert(DAT_INVALID_STATE_CNO_IN_USE == 60, "DAT 1.1 has no DAT_INVALID_STATE_EP_UNCONF* subtypes");
static_assert(DAT_INVALID_HANDLE == 0x00050000, "the type field");
static_assert(sizeof(DAT_RETURN) == 4, "a 32-bit return code");

int dapl_headers_cxx_check() { return DAT_CONNECTION_EVENT_UNREACHABLE; }
