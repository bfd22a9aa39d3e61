/* clock.c - the project's only reader of the system clock.
 *
 * CLOCK_MONOTONIC_RAW is not slewed by NTP, so an interval measured across
 * an adjustment is still the true hardware interval; kernels or libcs
 * without it fall back to CLOCK_MONOTONIC, which at least never steps.
 * CLOCK_REALTIME (flashbench's choice) can jump and must not be used.
 */
#define _POSIX_C_SOURCE 200809L

#include <time.h>

#include "clock.h"

uint64_t clock_now_ns(void)
{
	struct timespec ts = { 0, 0 };

#ifdef CLOCK_MONOTONIC_RAW
	if (clock_gettime(CLOCK_MONOTONIC_RAW, &ts) == 0)
		return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
