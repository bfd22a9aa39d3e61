/* schema.h - the JSON schema of docs/json.md, read from the page itself,
 * and a strict checker of flashprobe's documents against it: no
 * undocumented key, no missing key, every value of its documented type
 * (and enum values from their list).  The tests check output against the
 * documentation, so the two cannot drift apart. */
#ifndef FLASHPROBE_TESTS_SCHEMA_H
#define FLASHPROBE_TESTS_SCHEMA_H

#include <stddef.h>

struct jsonv;
struct schema;

/* Read the tables of the page at path; NULL with a message in err. */
struct schema *schema_load(const char *path, char *err, size_t len);
void schema_free(struct schema *s);

/* Whether the page defines "### document `name`". */
int schema_has_document(const struct schema *s, const char *name);

/* Every object and enum a type names is defined: the number of problems,
 * described one per line in out. */
int schema_self_check(const struct schema *s, char *out, size_t len);

/* Check doc against document `name`: the number of problems, described
 * one per line ("path: what") in out. */
int schema_check(const struct schema *s, const char *name, const struct jsonv *doc,
		 char *out, size_t len);

#endif
