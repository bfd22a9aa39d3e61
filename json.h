/* json.h - a small streaming JSON writer for one document on a FILE.
 *
 * The writer tracks nesting and inserts commas; strings are escaped per RFC
 * 8259.  Doubles that are not finite are written as null.  Output is
 * indented two spaces per level.
 *
 * Every document is a flashprobe document: the object at the top level
 * starts with "schema": JSON_SCHEMA, so a script can tell which layout
 * (docs/json.md) it reads before it reads anything else.
 */
#ifndef FLASHPROBE_JSON_H
#define FLASHPROBE_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

/* The layout of every document, docs/json.md; bumped on incompatible
 * changes. */
#define JSON_SCHEMA "flashprobe/1"

struct json_writer {
	FILE *out;
	int depth;
	bool need_comma[JSON_MAX_DEPTH];
	bool after_key;
};

void json_init(struct json_writer *w, FILE *out);

/* Containers.  key is NULL inside arrays and at top level. */
void json_object_begin(struct json_writer *w, const char *key);
void json_object_end(struct json_writer *w);
void json_array_begin(struct json_writer *w, const char *key);
void json_array_end(struct json_writer *w);

/* Values; key NULL inside arrays. */
void json_string(struct json_writer *w, const char *key, const char *val);	/* NULL val -> null */
/* A text where "" means none (a note): written as null. */
void json_text_or_null(struct json_writer *w, const char *key, const char *val);
void json_uint(struct json_writer *w, const char *key, uint64_t val);
void json_int(struct json_writer *w, const char *key, int64_t val);
void json_double(struct json_writer *w, const char *key, double val);
void json_bool(struct json_writer *w, const char *key, bool val);
void json_null(struct json_writer *w, const char *key);

/* A size where 0 means unknown: written as null. */
void json_uint_or_null(struct json_writer *w, const char *key, uint64_t val);

/* Finish the document (writes the final newline). */
void json_end(struct json_writer *w);

#endif
