/* schema.c - docs/json.md as a schema, and the checker (see schema.h).
 *
 * The page's machine-read parts:
 *   "### enum `NAME`"      then lines "- `value`: ..."
 *   "### object `NAME`"    then table rows "| `key` | TYPE | unit | ... |"
 *   "### document `NAME`"  the same, for a command's top-level object
 * TYPE is string, integer, number, boolean, null, enum NAME, object NAME
 * or array of TYPE, optionally followed by "or null".  A "## " heading
 * ends a table.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "jsonv.h"
#include "schema.h"

#define SCHEMA_NAME 64
#define SCHEMA_TYPE 96

enum table_kind { TABLE_ENUM, TABLE_OBJECT, TABLE_DOCUMENT };

struct schema_entry {
	char key[SCHEMA_NAME];		/* member name, or an enum value */
	char type[SCHEMA_TYPE];		/* "" for enum values */
};

struct schema_table {
	enum table_kind kind;
	char name[SCHEMA_NAME];
	struct schema_entry *entries;
	size_t n;
};

struct schema {
	struct schema_table *tables;
	size_t n;
};

/* Problems found, written one per line into a caller's buffer. */
struct report {
	char *out;
	size_t len, used;
	int count;
};

static void problem(struct report *r, const char *path, const char *fmt, ...)
{
	va_list ap;
	int n;

	r->count++;
	if (!r->out || r->used + 1 >= r->len)
		return;
	n = snprintf(r->out + r->used, r->len - r->used, "%s: ", path[0] ? path : "(top)");
	if (n > 0)
		r->used = r->used + (size_t)n < r->len ? r->used + (size_t)n : r->len - 1;
	va_start(ap, fmt);
	n = vsnprintf(r->out + r->used, r->len - r->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		r->used = r->used + (size_t)n < r->len ? r->used + (size_t)n : r->len - 1;
	if (r->used + 1 < r->len) {
		r->out[r->used++] = '\n';
		r->out[r->used] = '\0';
	}
}

/* ---- reading the page ---- */

/* The text between the first pair of backticks in s, into buf. */
static bool backticked(const char *s, char *buf, size_t len)
{
	const char *a = strchr(s, '`'), *b = a ? strchr(a + 1, '`') : NULL;

	if (!b || (size_t)(b - a - 1) >= len)
		return false;
	memcpy(buf, a + 1, (size_t)(b - a - 1));
	buf[b - a - 1] = '\0';
	return true;
}

static void trim_copy(const char *s, size_t n, char *buf, size_t len)
{
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n'))
		n--;
	if (n >= len)
		n = len - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
}

static struct schema_table *find_table(const struct schema *s, enum table_kind kind,
				       const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->tables[i].kind == kind && !strcmp(s->tables[i].name, name))
			return &s->tables[i];
	return NULL;
}

static bool add_entry(struct schema_table *t, const char *key, const char *type)
{
	struct schema_entry *e = realloc(t->entries, (t->n + 1) * sizeof(*e));

	if (!e)
		return false;
	t->entries = e;
	snprintf(e[t->n].key, sizeof(e[t->n].key), "%s", key);
	snprintf(e[t->n].type, sizeof(e[t->n].type), "%s", type);
	t->n++;
	return true;
}

/* "### enum `x`" and the like: a new table, or NULL with a message. */
static struct schema_table *start_table(struct schema *s, const char *line,
					char *err, size_t len)
{
	static const char *const words[] = { "enum", "object", "document" };
	char name[SCHEMA_NAME];
	struct schema_table *t;
	const char *w = line + 4;

	for (enum table_kind k = TABLE_ENUM; k <= TABLE_DOCUMENT; k++) {
		size_t n = strlen(words[k]);

		if (strncmp(w, words[k], n) || w[n] != ' ')
			continue;
		if (!backticked(w, name, sizeof(name)) || find_table(s, k, name)) {
			snprintf(err, len, "bad or repeated heading: %s", line);
			return NULL;
		}
		t = realloc(s->tables, (s->n + 1) * sizeof(*t));
		if (!t) {
			snprintf(err, len, "out of memory");
			return NULL;
		}
		s->tables = t;
		t = &s->tables[s->n++];
		memset(t, 0, sizeof(*t));
		t->kind = k;
		snprintf(t->name, sizeof(t->name), "%s", name);
		return t;
	}
	snprintf(err, len, "a table heading must be enum, object or document: %s", line);
	return NULL;
}

/* "| `key` | TYPE | ...": the key and the second cell. */
static bool table_row(const char *line, char *key, char *type)
{
	const char *c1 = strchr(line + 1, '|'), *c2 = c1 ? strchr(c1 + 1, '|') : NULL;

	if (!c2 || !backticked(line, key, SCHEMA_NAME))
		return false;
	trim_copy(c1 + 1, (size_t)(c2 - c1 - 1), type, SCHEMA_TYPE);
	return type[0] != '\0';
}

static int read_line(struct schema *s, struct schema_table **cur, const char *line,
		     char *err, size_t len)
{
	char key[SCHEMA_NAME], type[SCHEMA_TYPE];

	if (!strncmp(line, "### ", 4)) {
		*cur = start_table(s, line, err, len);
		return *cur ? 0 : -1;
	}
	if (!strncmp(line, "## ", 3) || !strncmp(line, "# ", 2)) {
		*cur = NULL;
		return 0;
	}
	if (*cur && (*cur)->kind == TABLE_ENUM && !strncmp(line, "- `", 3)) {
		if (!backticked(line, key, sizeof(key)) || !add_entry(*cur, key, ""))
			return snprintf(err, len, "bad enum line: %s", line), -1;
		return 0;
	}
	if (*cur && (*cur)->kind != TABLE_ENUM && !strncmp(line, "| `", 3)) {
		if (!table_row(line, key, type) || !add_entry(*cur, key, type))
			return snprintf(err, len, "bad table row: %s", line), -1;
		return 0;
	}
	return 0;
}

struct schema *schema_load(const char *path, char *err, size_t len)
{
	struct schema *s = calloc(1, sizeof(*s));
	struct schema_table *cur = NULL;
	FILE *f = fopen(path, "r");
	char line[1024];
	int ret = 0;

	if (!s || !f) {
		snprintf(err, len, "cannot read %s", path);
		if (f)
			fclose(f);
		free(s);
		return NULL;
	}
	while (!ret && fgets(line, sizeof(line), f))
		ret = read_line(s, &cur, line, err, len);
	fclose(f);
	if (ret) {
		schema_free(s);
		return NULL;
	}
	return s;
}

void schema_free(struct schema *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->tables[i].entries);
	free(s->tables);
	free(s);
}

int schema_has_document(const struct schema *s, const char *name)
{
	return find_table(s, TABLE_DOCUMENT, name) != NULL;
}

/* ---- types ---- */

struct type {
	bool nullable;
	char base[SCHEMA_TYPE];		/* "array of X", "object X", "enum X", ... */
};

static void parse_type(const char *text, struct type *t)
{
	static const char suffix[] = " or null";
	size_t n = strlen(text), sn = sizeof(suffix) - 1;

	t->nullable = n > sn && !strcmp(text + n - sn, suffix);
	trim_copy(text, t->nullable ? n - sn : n, t->base, sizeof(t->base));
}

static const char *after(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(s, prefix, n) ? NULL : s + n;
}

static bool is_primitive(const char *base)
{
	static const char *const names[] = { "string", "integer", "number", "boolean", "null" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(base, names[i]))
			return true;
	return false;
}

/* The named table a type refers to exists (recursing through arrays). */
static void check_type_names(const struct schema *s, const char *where, const char *text,
			     struct report *r)
{
	struct type t;
	const char *name;

	parse_type(text, &t);
	if ((name = after(t.base, "array of ")))
		check_type_names(s, where, name, r);
	else if ((name = after(t.base, "object ")) && !find_table(s, TABLE_OBJECT, name))
		problem(r, where, "no object table '%s'", name);
	else if ((name = after(t.base, "enum ")) && !find_table(s, TABLE_ENUM, name))
		problem(r, where, "no enum '%s'", name);
	else if (!after(t.base, "object ") && !after(t.base, "enum ") && !is_primitive(t.base))
		problem(r, where, "unknown type '%s'", t.base);
}

int schema_self_check(const struct schema *s, char *out, size_t len)
{
	struct report r = { out, len, 0, 0 };
	char where[2 * SCHEMA_NAME + 2];

	if (out && len)
		out[0] = '\0';
	for (size_t i = 0; i < s->n; i++) {
		const struct schema_table *t = &s->tables[i];

		if (!t->n)
			problem(&r, t->name, "empty table");
		for (size_t k = 0; t->kind != TABLE_ENUM && k < t->n; k++) {
			snprintf(where, sizeof(where), "%s.%s", t->name, t->entries[k].key);
			check_type_names(s, where, t->entries[k].type, &r);
		}
	}
	return r.count;
}

/* ---- checking a document ---- */

static const char *jtype_name(enum jsonv_type t)
{
	static const char *const names[] = { "null", "boolean", "number", "string",
					     "array", "object" };

	return names[t];
}

static void check_value(const struct schema *s, const struct jsonv *v, const char *type,
			const char *path, struct report *r);

static void check_members(const struct schema *s, const struct schema_table *t,
			  const struct jsonv *v, const char *path, struct report *r)
{
	char sub[512];

	for (const struct jsonv *m = v->child; m; m = m->next) {
		const struct schema_entry *e = NULL;

		for (size_t k = 0; k < t->n && !e; k++)
			if (!strcmp(t->entries[k].key, m->key))
				e = &t->entries[k];
		snprintf(sub, sizeof(sub), "%s%s%s", path, path[0] ? "." : "", m->key);
		if (!e)
			problem(r, sub, "undocumented key (not in object `%s`)", t->name);
		else
			check_value(s, m, e->type, sub, r);
	}
	for (size_t k = 0; k < t->n; k++) {
		const struct jsonv *m = v->child;

		while (m && strcmp(m->key, t->entries[k].key))
			m = m->next;
		if (!m)
			problem(r, path, "missing key '%s' of object `%s`", t->entries[k].key,
				t->name);
	}
}

static void check_enum(const struct schema *s, const char *name, const struct jsonv *v,
		       const char *path, struct report *r)
{
	const struct schema_table *t = find_table(s, TABLE_ENUM, name);

	if (v->type != JSONV_STRING) {
		problem(r, path, "%s where enum %s wants a string", jtype_name(v->type), name);
		return;
	}
	for (size_t k = 0; t && k < t->n; k++)
		if (!strcmp(t->entries[k].key, v->string))
			return;
	problem(r, path, "'%s' is not a value of enum %s", v->string, name);
}

static void check_array(const struct schema *s, const char *elem, const struct jsonv *v,
			const char *path, struct report *r)
{
	char sub[512];

	if (v->type != JSONV_ARRAY) {
		problem(r, path, "%s where an array is documented", jtype_name(v->type));
		return;
	}
	snprintf(sub, sizeof(sub), "%s[]", path);
	for (const struct jsonv *e = v->child; e; e = e->next)
		check_value(s, e, elem, sub, r);
}

static void check_object(const struct schema *s, const char *name, const struct jsonv *v,
			 const char *path, struct report *r)
{
	const struct schema_table *t = find_table(s, TABLE_OBJECT, name);

	if (v->type != JSONV_OBJECT)
		problem(r, path, "%s where object `%s` is documented", jtype_name(v->type), name);
	else if (!t)
		problem(r, path, "no object table '%s'", name);
	else
		check_members(s, t, v, path, r);
}

static bool primitive_matches(const char *base, const struct jsonv *v)
{
	if (!strcmp(base, "string"))
		return v->type == JSONV_STRING;
	if (!strcmp(base, "boolean"))
		return v->type == JSONV_BOOL;
	if (!strcmp(base, "number"))
		return v->type == JSONV_NUMBER;
	if (!strcmp(base, "integer"))
		return v->type == JSONV_NUMBER && isfinite(v->number) &&
		       v->number == floor(v->number);
	return !strcmp(base, "null") && v->type == JSONV_NULL;
}

static void check_value(const struct schema *s, const struct jsonv *v, const char *type,
			const char *path, struct report *r)
{
	struct type t;
	const char *name;

	parse_type(type, &t);
	if (v->type == JSONV_NULL && t.nullable)
		return;
	if ((name = after(t.base, "array of ")))
		check_array(s, name, v, path, r);
	else if ((name = after(t.base, "object ")))
		check_object(s, name, v, path, r);
	else if ((name = after(t.base, "enum ")))
		check_enum(s, name, v, path, r);
	else if (!primitive_matches(t.base, v))
		problem(r, path, "%s where %s is documented", jtype_name(v->type), type);
}

int schema_check(const struct schema *s, const char *name, const struct jsonv *doc,
		 char *out, size_t len)
{
	const struct schema_table *t = find_table(s, TABLE_DOCUMENT, name);
	struct report r = { out, len, 0, 0 };

	if (out && len)
		out[0] = '\0';
	if (!t) {
		problem(&r, "", "no document `%s` in the schema", name);
		return r.count;
	}
	if (doc->type != JSONV_OBJECT) {
		problem(&r, "", "the document is a %s, not an object", jtype_name(doc->type));
		return r.count;
	}
	if (!doc->child || strcmp(doc->child->key, "schema") ||
	    doc->child->type != JSONV_STRING || strcmp(doc->child->string, JSON_SCHEMA))
		problem(&r, "schema", "the first key must be \"schema\": \"%s\"", JSON_SCHEMA);
	check_members(s, t, doc, "", &r);
	return r.count;
}
