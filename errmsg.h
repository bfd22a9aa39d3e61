/* errmsg.h - one-line reasons for callers' error buffers. */
#ifndef FLASHPROBE_ERRMSG_H
#define FLASHPROBE_ERRMSG_H

#include <stddef.h>

/* printf into err (errlen bytes, always terminated); does nothing when err
 * is NULL or errlen 0, so callers may pass no buffer. */
void fp_errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
