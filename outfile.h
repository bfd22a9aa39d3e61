/* outfile.h - open a file flashprobe writes besides the device (the SVG
 * chart) without ever writing through a name that changed meanwhile. */
#ifndef FLASHPROBE_OUTFILE_H
#define FLASHPROBE_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

/* Why path cannot be an output file now: "" when it can (it does not
 * exist, or it is a regular file that is neither a flashprobe journal
 * nor the data of device).  what names it in the reason ("--svg").
 * Returns 0, or -EINVAL with the reason in err. */
int outfile_check(const char *what, const char *path, const char *device,
		  char *err, size_t errlen);

/* Open path for writing, emptied, with outfile_check's rules applied to
 * the file actually opened: a symbolic link is not followed, and only a
 * regular file is written.  A run takes minutes, and the name given at
 * its start may by now be a link to the card or an unfinished journal.
 * 0 with *out set, or a negative errno with the reason in err. */
int outfile_open(const char *what, const char *path, const char *device,
		 FILE **out, char *err, size_t errlen);

#endif
