/* devspec.c - device arguments: a simulated card or a path. */
#include <errno.h>
#include <string.h>

#include "devspec.h"
#include "errmsg.h"
#include "sim.h"

#define DEVSPEC_SIM_PREFIX "sim:"

bool devspec_is_sim(const char *spec)
{
	return spec != NULL && strncmp(spec, DEVSPEC_SIM_PREFIX,
				       strlen(DEVSPEC_SIM_PREFIX)) == 0;
}

const char *devspec_sim_body(const char *spec)
{
	return devspec_is_sim(spec) ? spec + strlen(DEVSPEC_SIM_PREFIX) : NULL;
}

bool devspec_dev_is_sim(const struct fp_dev *d)
{
	while (fp_dev_inner(d) != NULL)
		d = fp_dev_inner(d);
	return d != NULL && fp_dev_kind(d) == FP_DEV_SIM;
}

/* A simulated card is always writable; the write area still decides what
 * may be written, so mode does not matter. */
static int open_sim(const char *spec, struct fp_dev **out, char *err,
		    size_t errlen)
{
	const char *body = devspec_sim_body(spec);
	struct sim_profile p;
	int rc;

	*out = NULL;
	rc = sim_profile_parse(body, &p, err, errlen);
	if (rc < 0)
		return rc;
	rc = sim_open(&p, out);
	if (rc < 0) {
		*out = NULL;
		fp_errf(err, errlen, "cannot create simulated card '%s': %s",
			body, strerror(-rc));
	}
	return rc;
}

int devspec_open(const char *spec, enum fp_open_mode mode, struct fp_dev **out,
		 char *err, size_t errlen)
{
	if (spec == NULL || out == NULL) {
		fp_errf(err, errlen, "no device given");
		return -EINVAL;
	}
	if (devspec_is_sim(spec))
		return open_sim(spec, out, err, errlen);
	return fp_dev_open_path(spec, mode, out, err, errlen);
}
