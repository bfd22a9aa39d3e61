/* durable.h - whether what is written in a directory survives a power
 * loss.  A journal must: after the crash it is what puts the card's data
 * back.  Memory hides behind more than tmpfs: an overlay whose writable
 * layer is in tmpfs (the root of many live systems), a file system on a
 * RAM disk or zram, or on a loop device over a file in any of those.
 */
#ifndef FLASHPROBE_DURABLE_H
#define FLASHPROBE_DURABLE_H

#include <stddef.h>

/* 1 when the data written in directory dir lives in memory, with what
 * says where ("tmpfs or ramfs", "an overlay whose upper layer is in
 * tmpfs or ramfs", ...); 2 when it is on a loop device over a file that
 * can no longer be found (deleted, or on a file system unmounted lazily),
 * so where it lives cannot be told; 0 otherwise (the directory itself
 * unknown: creating the file will tell).  sys and mountinfo are "/sys"
 * and "/proc/self/mountinfo" but in tests. */
int durable_in_memory(const char *sys, const char *mountinfo, const char *dir,
		      char *what, size_t len);

/* The upper directory of the overlay mounted as device major:minor, from
 * the mountinfo file: 1 and upper (octal escapes undone), 0 when there is
 * no such overlay or it has no upper layer (read-only), -errno when the
 * file cannot be read. */
int durable_overlay_upper(const char *mountinfo, unsigned major, unsigned minor,
			  char *upper, size_t len);

#endif
