// SPDX-License-Identifier: GPL-2.0
/*
 * KTAP output for gupnm_probe: diagnostic lines and numbered results, with
 * the counts the Totals line reports. The probe's lowest layer: it uses no
 * other file of the probe.
 */
#include <stdarg.h>
#include <stdio.h>

#include "probe.h"

unsigned int test_nr, nr_pass, nr_fail, nr_skip;

void msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("# ", stdout);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

void result(int code, const char *name, const char *fmt, ...)
{
	va_list ap;

	test_nr++;
	printf("%s %u %s", code == KSFT_FAIL ? "not ok" : "ok", test_nr, name);
	if (code == KSFT_SKIP) {
		nr_skip++;
		fputs(" # SKIP ", stdout);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	} else if (code == KSFT_PASS) {
		nr_pass++;
	} else {
		nr_fail++;
	}
	putchar('\n');
	fflush(stdout);
}
