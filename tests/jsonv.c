/* jsonv.c - strict recursive-descent JSON parser (RFC 8259) for tests. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "jsonv.h"

struct parser {
	const char *p;
	int depth;
};

static struct jsonv *parse_value(struct parser *ps);

static void skip_ws(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

static struct jsonv *new_value(enum jsonv_type t)
{
	struct jsonv *v = calloc(1, sizeof(*v));

	if (v)
		v->type = t;
	return v;
}

static bool literal(struct parser *ps, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(ps->p, word, n))
		return false;
	ps->p += n;
	return true;
}

static int hex4(const char *s)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return -1;
		v = v * 16 + (isdigit((unsigned char)s[i]) ? s[i] - '0'
				: (tolower((unsigned char)s[i]) - 'a' + 10));
	}
	return v;
}

static size_t put_utf8(char *out, int cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	out[0] = (char)(0xe0 | cp >> 12);
	out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[2] = (char)(0x80 | (cp & 0x3f));
	return 3;
}

static char *parse_string_raw(struct parser *ps)
{
	const char *s = ps->p + 1;
	char *out, *o;

	if (*ps->p != '"')
		return NULL;
	out = o = malloc(strlen(s) + 1);
	if (!out)
		return NULL;
	while (*s != '"') {
		if ((unsigned char)*s < 0x20)
			goto bad;	/* unescaped control character or end */
		if (*s != '\\') {
			*o++ = *s++;
			continue;
		}
		s++;
		switch (*s) {
		case '"': case '\\': case '/':
			*o++ = *s;
			break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u': {
			int cp = hex4(s + 1);

			if (cp < 0)
				goto bad;
			o += put_utf8(o, cp);
			s += 4;
			break;
		}
		default:
			goto bad;
		}
		s++;
	}
	*o = '\0';
	ps->p = s + 1;
	return out;
bad:
	free(out);
	return NULL;
}

static struct jsonv *parse_number(struct parser *ps)
{
	const char *s = ps->p;
	char *end;
	struct jsonv *v;

	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (isdigit((unsigned char)*s))
		while (isdigit((unsigned char)*s))
			s++;
	else
		return NULL;
	if (*s == '.') {
		s++;
		if (!isdigit((unsigned char)*s))
			return NULL;
		while (isdigit((unsigned char)*s))
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!isdigit((unsigned char)*s))
			return NULL;
		while (isdigit((unsigned char)*s))
			s++;
	}
	v = new_value(JSONV_NUMBER);
	if (!v)
		return NULL;
	v->number = strtod(ps->p, &end);
	ps->p = s;
	return v;
}

/* Elements of an array or members of an object, up to the closing char. */
static struct jsonv *parse_container(struct parser *ps, enum jsonv_type t)
{
	char close = t == JSONV_ARRAY ? ']' : '}';
	struct jsonv *v = new_value(t), **tail;

	if (!v || ++ps->depth > 64)
		goto bad;
	tail = &v->child;
	ps->p++;
	skip_ws(ps);
	if (*ps->p == close) {
		ps->p++;
		ps->depth--;
		return v;
	}
	for (;;) {
		char *key = NULL;
		struct jsonv *item;

		skip_ws(ps);
		if (t == JSONV_OBJECT) {
			key = parse_string_raw(ps);
			if (!key)
				goto bad;
			skip_ws(ps);
			if (*ps->p != ':') {
				free(key);
				goto bad;
			}
			ps->p++;
		}
		item = parse_value(ps);
		if (!item) {
			free(key);
			goto bad;
		}
		item->key = key;
		*tail = item;
		tail = &item->next;
		skip_ws(ps);
		if (*ps->p == ',') {
			ps->p++;
			continue;
		}
		if (*ps->p != close)
			goto bad;
		ps->p++;
		ps->depth--;
		return v;
	}
bad:
	jsonv_free(v);
	return NULL;
}

static struct jsonv *parse_value(struct parser *ps)
{
	struct jsonv *v = NULL;

	skip_ws(ps);
	switch (*ps->p) {
	case '{':
		return parse_container(ps, JSONV_OBJECT);
	case '[':
		return parse_container(ps, JSONV_ARRAY);
	case '"': {
		char *s = parse_string_raw(ps);

		if (!s)
			return NULL;
		v = new_value(JSONV_STRING);
		if (v)
			v->string = s;
		else
			free(s);
		return v;
	}
	case 't':
	case 'f':
		if (literal(ps, "true") || literal(ps, "false")) {
			v = new_value(JSONV_BOOL);
			if (v)
				v->boolean = ps->p[-1] == 'e' && ps->p[-2] == 'u';
		}
		return v;
	case 'n':
		return literal(ps, "null") ? new_value(JSONV_NULL) : NULL;
	default:
		return parse_number(ps);
	}
}

struct jsonv *jsonv_parse(const char *text)
{
	struct parser ps = { text, 0 };
	struct jsonv *v = parse_value(&ps);

	skip_ws(&ps);
	if (v && *ps.p) {
		jsonv_free(v);
		return NULL;
	}
	return v;
}

void jsonv_free(struct jsonv *v)
{
	while (v) {
		struct jsonv *next = v->next;

		jsonv_free(v->child);
		free(v->string);
		free(v->key);
		free(v);
		v = next;
	}
}

const struct jsonv *jsonv_get(const struct jsonv *v, const char *path)
{
	char name[128];

	while (v && *path) {
		const char *dot = strchr(path, '.');
		size_t n = dot ? (size_t)(dot - path) : strlen(path);
		const struct jsonv *c;

		if (v->type != JSONV_OBJECT || n >= sizeof(name))
			return NULL;
		memcpy(name, path, n);
		name[n] = '\0';
		for (c = v->child; c && strcmp(c->key, name); c = c->next)
			;
		v = c;
		path += n + (dot ? 1 : 0);
	}
	return v;
}

size_t jsonv_len(const struct jsonv *a)
{
	size_t n = 0;

	for (const struct jsonv *c = a ? a->child : NULL; c; c = c->next)
		n++;
	return n;
}

const struct jsonv *jsonv_at(const struct jsonv *a, size_t i)
{
	const struct jsonv *c = a ? a->child : NULL;

	while (c && i--)
		c = c->next;
	return c;
}
