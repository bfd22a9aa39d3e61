/* errmsg.h - one-line reasons for callers' error buffers. */
#ifndef FLASHPROBE_ERRMSG_H
#define FLASHPROBE_ERRMSG_H

#include <stddef.h>

/* flashprobe's own error codes, returned negated like errno values.  They
 * lie above every errno, so each keeps one meaning: a caller maps them to
 * an exit status without guessing what a system errno meant here.  The
 * reason is always in the error buffer (strerror() does not know them). */
#define FP_ERR_BASE 0x4600
#define FP_EREFUSED (FP_ERR_BASE + 1)	/* refused for safety: exit 3 */
#define FP_ENOCONSENT (FP_ERR_BASE + 2)	/* a write test without consent: exit 2 */
#define FP_ELOST (FP_ERR_BASE + 3)	/* a journal that should exist is gone:
					 * the device may hold test data (exit 1) */

/* printf into err (errlen bytes, always terminated); does nothing when err
 * is NULL or errlen 0, so callers may pass no buffer. */
void fp_errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
