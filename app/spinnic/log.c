/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic's log types: spinnic.app (SPINNIC_LOG, every file of the
 * application) and spinnic.portals, which lib/portals (libc only) reaches
 * through the sink that main() installs with spinnic_log_portals().
 */
#include <rte_log.h>

#include "spinnic.h"
#include "ptl_nic.h"

#define RTE_LOG_DEFAULT_LOGTYPE spinnic.app
RTE_LOG_REGISTER_DEFAULT(spinnic_logtype, INFO);
RTE_LOG_REGISTER(spinnic_portals_logtype, spinnic.portals, NOTICE);

/* lib/portals levels are syslog's; rte_log's are one higher */
static void
portals_log(int level, const char *msg)
{
	rte_log((uint32_t)level + 1, spinnic_portals_logtype,
		"spinnic.portals: %s\n", msg);
}

void
spinnic_log_portals(void)
{
	ptl_set_log(portals_log, rte_log_get_level(spinnic_portals_logtype) - 1);
}
