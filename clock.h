/* clock.h - the one place that reads the wall of time. */
#ifndef FLASHPROBE_CLOCK_H
#define FLASHPROBE_CLOCK_H

#include <stdint.h>

/* Nanoseconds from CLOCK_MONOTONIC_RAW (CLOCK_MONOTONIC where RAW is
 * missing): never steps, unaffected by NTP slewing. */
uint64_t clock_now_ns(void);

#endif
