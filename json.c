/* json.c - a small streaming JSON writer (after util-linux lib/jsonwrt.c).
 *
 * The caller supplies structure (begin/end pairs, keys inside objects only);
 * the writer supplies commas, indentation and escaping.  Every string is
 * emitted as valid UTF-8: invalid bytes (a path in Latin-1, say) become
 * U+FFFD so one odd file name cannot make the whole document unparsable.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* Deeper nesting than JSON_MAX_DEPTH shares the last comma slot: the output
 * may then lack commas, but nothing is written out of bounds. */
static bool *json_comma_slot(struct json_writer *w)
{
	int d = w->depth;

	if (d < 0)
		d = 0;
	if (d >= JSON_MAX_DEPTH)
		d = JSON_MAX_DEPTH - 1;
	return &w->need_comma[d];
}

void json_init(struct json_writer *w, FILE *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
}

static void json_indent(struct json_writer *w, int depth)
{
	for (int i = 0; i < depth; i++)
		fputs("  ", w->out);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid:
 * overlong forms, surrogates and code points above U+10FFFF are refused. */
static size_t json_utf8_len(const unsigned char *s)
{
	uint32_t cp;
	size_t len;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	/* The terminating NUL is not a continuation byte, so this never
	 * reads past the end of the string. */
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

/* The two-character escape RFC 8259 defines for c, or NULL. */
static const char *json_short_escape(unsigned char c)
{
	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\b':
		return "\\b";
	case '\f':
		return "\\f";
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	default:
		return NULL;
	}
}

static void json_write_escaped(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	const char *esc;
	size_t n;

	fputc('"', out);
	while (*s != '\0') {
		esc = json_short_escape(*s);
		if (esc != NULL) {
			fputs(esc, out);
			n = 1;
		} else if (*s < 0x20) {
			fprintf(out, "\\u%04x", *s);
			n = 1;
		} else if ((n = json_utf8_len(s)) == 0) {
			fputs("\\ufffd", out);
			n = 1;
		} else {
			fwrite(s, 1, n, out);
		}
		s += n;
	}
	fputc('"', out);
}

/* Comma, newline and indentation before a member, then its key. */
static void json_prefix(struct json_writer *w, const char *key)
{
	bool *comma = json_comma_slot(w);

	if (*comma)
		fputc(',', w->out);
	if (w->depth > 0) {
		fputc('\n', w->out);
		json_indent(w, w->depth);
	}
	*comma = true;
	if (key != NULL) {
		json_write_escaped(w->out, key);
		fputs(": ", w->out);
		w->after_key = true;
	}
}

static void json_begin(struct json_writer *w, const char *key, char open)
{
	bool document = w->depth == 0 && open == '{';

	json_prefix(w, key);
	w->after_key = false;
	fputc(open, w->out);
	w->depth++;
	*json_comma_slot(w) = false;
	if (document)
		json_string(w, "schema", JSON_SCHEMA);
}

static void json_finish(struct json_writer *w, char close)
{
	bool had_members = *json_comma_slot(w);

	if (w->depth > 0)
		w->depth--;
	/* Empty containers stay on one line: "[]" and "{}". */
	if (had_members) {
		fputc('\n', w->out);
		json_indent(w, w->depth);
	}
	fputc(close, w->out);
}

void json_object_begin(struct json_writer *w, const char *key)
{
	json_begin(w, key, '{');
}

void json_object_end(struct json_writer *w)
{
	json_finish(w, '}');
}

void json_array_begin(struct json_writer *w, const char *key)
{
	json_begin(w, key, '[');
}

void json_array_end(struct json_writer *w)
{
	json_finish(w, ']');
}

/* Writes a member whose value is the literal text. */
static void json_raw(struct json_writer *w, const char *key, const char *text)
{
	json_prefix(w, key);
	w->after_key = false;
	fputs(text, w->out);
}

void json_string(struct json_writer *w, const char *key, const char *val)
{
	if (val == NULL) {
		json_raw(w, key, "null");
		return;
	}
	json_prefix(w, key);
	w->after_key = false;
	json_write_escaped(w->out, val);
}

void json_text_or_null(struct json_writer *w, const char *key, const char *val)
{
	json_string(w, key, val && val[0] ? val : NULL);
}

void json_uint(struct json_writer *w, const char *key, uint64_t val)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, val);
	json_raw(w, key, buf);
}

void json_int(struct json_writer *w, const char *key, int64_t val)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRId64, val);
	json_raw(w, key, buf);
}

void json_double(struct json_writer *w, const char *key, double val)
{
	char buf[32];

	if (!isfinite(val)) {
		json_raw(w, key, "null");
		return;
	}
	/* Shortest of 15 or 17 significant digits that reads back as the
	 * same double: 0.1 stays "0.1", nothing is lost. */
	snprintf(buf, sizeof(buf), "%.15g", val);
	if (strtod(buf, NULL) != val)
		snprintf(buf, sizeof(buf), "%.17g", val);
	/* A locale with a decimal comma would produce invalid JSON. */
	for (char *p = buf; *p != '\0'; p++)
		if (*p == ',')
			*p = '.';
	json_raw(w, key, buf);
}

void json_bool(struct json_writer *w, const char *key, bool val)
{
	json_raw(w, key, val ? "true" : "false");
}

void json_null(struct json_writer *w, const char *key)
{
	json_raw(w, key, "null");
}

void json_end(struct json_writer *w)
{
	fputc('\n', w->out);
	fflush(w->out);
}

void json_uint_or_null(struct json_writer *w, const char *key, uint64_t val)
{
	if (val)
		json_uint(w, key, val);
	else
		json_null(w, key);
}
