/* report_capacity.c - output of the fake-capacity check. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "capacity.h"
#include "json.h"
#include "report.h"
#include "report_capacity.h"
#include "units.h"

#define MIB (1024u * 1024u)	/* partitions start at 1 MiB, as usual */

const char *report_capacity_headline(const struct capacity_result *r, char *buf,
				     size_t len)
{
	char real[32], rep[32], bad[32];

	units_format_bytes(r->real_bytes, real, sizeof(real));
	units_format_bytes(r->reported_bytes, rep, sizeof(rep));
	units_format_bytes(r->first_bad_bytes, bad, sizeof(bad));
	switch (r->verdict) {
	case CAPACITY_GENUINE:
		/* a sample: a bad spot between the test blocks would not show */
		snprintf(buf, len, "genuine: %s real (all %" PRIu64 " test blocks kept "
			 "their data)", rep, r->blocks_tested);
		break;
	case CAPACITY_WRAPAROUND:
		snprintf(buf, len, "FAKE: %s of %s real (writes past %s wrap to the start)",
			 real, rep, units_format_bytes(r->alias_period_bytes, bad, sizeof(bad)));
		break;
	case CAPACITY_LIMBO:
		snprintf(buf, len, "FAKE: %s of %s real (writes past %s are lost)",
			 real, rep, real);
		break;
	case CAPACITY_DAMAGED:
		if (r->fresh_lost)
			snprintf(buf, len, "DAMAGED: new writes were lost where earlier "
				 "ones were kept (nothing verified)");
		else if (r->stopped_keeping)	/* where it failed first says little */
			snprintf(buf, len, "DAMAGED: it stopped keeping writes during "
				 "the test (%s verified from the start)",
				 r->real_bytes ? real : "nothing");
		else if (r->real_bytes == 0)
			snprintf(buf, len, "DAMAGED: bad from the start (nothing verified)");
		else
			snprintf(buf, len, "DAMAGED: bad from about %s (%s verified "
				 "from the start)", bad, real);
		break;
	default:
		snprintf(buf, len, "undetermined: %s", r->note[0] ? r->note : "no clear answer");
		break;
	}
	return buf;
}

void report_capacity_advice(FILE *out, const struct capacity_result *r,
			    const char *device, enum capacity_partition partition,
			    const char *indent)
{
	uint64_t size_mib = r->real_bytes / MIB > 1 ? r->real_bytes / MIB - 1 : 0;
	char real[32];

	if (!capacity_is_bad(r->verdict))
		return;
	units_format_bytes(r->real_bytes, real, sizeof(real));
	if (partition == CAPACITY_PARTITION_NONE)
		;	/* the card is failing: its data first */
	else if (partition == CAPACITY_PARTITION_BELOW && size_mib)
		fprintf(out, "%sthe partition below stays inside the verified %s\n", indent,
			real);
	else if (size_mib)
		fprintf(out, "%suse only the verified %s: echo 'start=1MiB, size=%" PRIu64
			"MiB' | sfdisk %s\n", indent, real, size_mib, device);
	else
		fprintf(out, "%snothing of it is usable\n", indent);
	fprintf(out, "%s%s\n", indent, r->verdict == CAPACITY_DAMAGED ?
		"copy what you need off it and replace it" :
		"return the card: it is counterfeit, its reported size is a lie");
}

void report_capacity_text(FILE *out, const struct capacity_result *r,
			  const char *device)
{
	char h[320];

	fprintf(out, "capacity: %s (confidence %.2f)\n",
		report_capacity_headline(r, h, sizeof(h)), r->confidence);
	report_capacity_advice(out, r, device, CAPACITY_PARTITION_LINE, "  ");
	report_capacity_evidence(out, r);
}

void report_capacity_evidence(FILE *out, const struct capacity_result *r)
{
	char a[32], b[32];

	if (r->note[0] && r->verdict != CAPACITY_UNDETERMINED)
		fprintf(out, "note: %s\n", r->note);
	fprintf(out, "test blocks: %" PRIu64 " written in %u round%s; ", r->blocks_tested,
		r->rounds, r->rounds == 1 ? "" : "s");
	if (r->flushes)
		fprintf(out, "%u cache flush%s of %s", r->flushes,
			r->flushes == 1 ? "" : "es",
			units_format_bytes(r->flush_bytes, a, sizeof(a)));
	if (r->deep_flushes)
		fprintf(out, "%s%u of %s", r->flushes ? ", then " : "", r->deep_flushes,
			units_format_bytes(r->deep_flush_bytes, a, sizeof(a)));
	if (r->flushes || r->deep_flushes)
		fprintf(out, " written and read before the read-backs%s\n",
			r->cache_defeated ? "" : " (not as large as the cache size asked for)");
	else
		fprintf(out, "no cache flush\n");
	if (r->blocks_rechecked || r->blocks_fresh)
		fprintf(out, "recheck: %" PRIu64 " test block%s that had kept %s data written "
			"again%s, then a flush: %s\n",
			r->blocks_rechecked, r->blocks_rechecked == 1 ? "" : "s",
			r->blocks_rechecked == 1 ? "its" : "their",
			r->blocks_fresh ? " and new ones between them" : "",
			r->fresh_lost ? "new ones lost it" :
			r->stopped_keeping ? "some lost it" : "all kept it");
	fprintf(out, "%s written, %" PRIu64 " I/Os, %s of device time\n",
		units_format_bytes(r->bytes_written, a, sizeof(a)), r->io_count,
		units_format_ns((int64_t)r->elapsed_ns, b, sizeof(b)));
}

void report_capacity_json(struct json_writer *w, const struct capacity_result *r)
{
	bool known = r->verdict != CAPACITY_UNDETERMINED;

	json_object_begin(w, "capacity");
	if (known)	/* undetermined: null, the note says why */
		report_json_verdict(w, "verdict", capacity_verdict_name(r->verdict),
				    r->confidence, "measured");
	else
		json_null(w, "verdict");
	json_uint(w, "reported_bytes", r->reported_bytes);
	if (known)
		report_json_size(w, "real_bytes", r->real_bytes, r->confidence, "measured");
	else
		json_null(w, "real_bytes");
	json_uint_or_null(w, "alias_period_bytes",
			  r->verdict == CAPACITY_WRAPAROUND ? r->alias_period_bytes : 0);
	if (known && r->first_bad_known)
		json_uint(w, "first_bad_bytes", r->first_bad_bytes);
	else
		json_null(w, "first_bad_bytes");
	json_uint(w, "blocks_tested", r->blocks_tested);
	json_uint(w, "blocks_rechecked", r->blocks_rechecked);
	json_uint(w, "blocks_fresh", r->blocks_fresh);
	json_bool(w, "fresh_lost", r->fresh_lost);
	json_bool(w, "stopped_keeping", r->stopped_keeping);
	json_uint(w, "bytes_written", r->bytes_written);
	json_uint(w, "io_count", r->io_count);
	json_uint(w, "elapsed_ns", r->elapsed_ns);
	json_uint(w, "cache_flush_bytes", r->flush_bytes);
	json_uint(w, "cache_flushes", r->flushes);
	json_uint(w, "deep_flush_bytes", r->deep_flush_bytes);
	json_uint(w, "deep_flushes", r->deep_flushes);
	json_bool(w, "cache_hid_loss", r->cache_hid_loss);
	json_bool(w, "cache_defeated", r->cache_defeated);
	json_uint(w, "rounds", r->rounds);
	json_text_or_null(w, "note", r->note);
	json_object_end(w);
}
