/* dat/udat.h compiles as C99 on its own, and a consumer written against
 * uDAPL 1.1 uses its names as the specification spells them. */
#include <dat/udat.h>

int dapl_headers_c99_check(void);

int dapl_headers_c99_check(void)
{
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_EP_PARAM param;
	DAT_EVENT event;
	DAT_LMR_TRIPLET lmr;
	DAT_RMR_TRIPLET rmr;
	DAT_DTO_COOKIE cookie;
	DAT_RETURN rc = dat_ia_open("ib0", 8, &async, &ia);
	cookie.as_64 = 1;
	lmr.lmr_context = 0;
	lmr.virtual_address = 0;
	lmr.segment_length = 0;
	rmr.rmr_context = 0;
	rmr.target_address = 0;
	rmr.segment_length = 0;
	param.ep_state = DAT_EP_STATE_UNCONNECTED;
	event.event_number = DAT_CONNECTION_EVENT_ESTABLISHED;
	(void)param;
	(void)event;
	(void)cookie;
	(void)lmr;
	(void)rmr;
	if (DAT_GET_TYPE(rc) == DAT_INVALID_HANDLE && DAT_GET_SUBTYPE(rc) == DAT_INVALID_HANDLE_EP)
		return 1;
	return (int)(sizeof(DAT_EVENT) + DAT_INVALID_STATE_EP_UNCONNECTED + DAT_PSP_PROVIDER_FLAG +
		     DAT_CLOSE_GRACEFUL_FLAG + DAT_COMPLETION_SUPPRESS_FLAG + DAT_DTO_ERR_FLUSHED);
}
