/* jsonv.h - a strict JSON parser for the tests: output is validated by
 * parsing it, not by matching strings. */
#ifndef FLASHPROBE_TESTS_JSONV_H
#define FLASHPROBE_TESTS_JSONV_H

#include <stdbool.h>
#include <stddef.h>

enum jsonv_type { JSONV_NULL, JSONV_BOOL, JSONV_NUMBER, JSONV_STRING,
		  JSONV_ARRAY, JSONV_OBJECT };

struct jsonv {
	enum jsonv_type type;
	bool boolean;
	double number;
	char *string;			/* decoded, for strings */
	char *key;			/* member name when inside an object */
	struct jsonv *child;		/* first element or member */
	struct jsonv *next;		/* next sibling */
};

/* Parse exactly one JSON document (surrounding white space allowed).
 * Returns NULL on any syntax error or trailing data. */
struct jsonv *jsonv_parse(const char *text);
void jsonv_free(struct jsonv *v);

/* Member of an object by a dotted path ("align.rows"), NULL if absent. */
const struct jsonv *jsonv_get(const struct jsonv *v, const char *path);
size_t jsonv_len(const struct jsonv *array);
const struct jsonv *jsonv_at(const struct jsonv *array, size_t i);

#endif
