/* xmlcheck.c - strict XML well-formedness checker (a subset large enough
 * for SVG: no DTDs, no CDATA, no processing instructions but the
 * declaration). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmlcheck.h"

struct xp {
	const char *p;
	const char *count_name;
	struct xml_stats *st;
};

static bool name_char(char c, bool first)
{
	return isalpha((unsigned char)c) || c == '_' || c == ':' ||
	       (!first && (isdigit((unsigned char)c) || c == '-' || c == '.'));
}

static size_t parse_name(struct xp *x, char *out, size_t cap)
{
	size_t n = 0;

	if (!name_char(*x->p, true))
		return 0;
	while (name_char(x->p[n], n == 0))
		n++;
	if (n >= cap)
		return 0;
	memcpy(out, x->p, n);
	out[n] = '\0';
	x->p += n;
	return n;
}

static void skip_ws(struct xp *x)
{
	while (*x->p == ' ' || *x->p == '\n' || *x->p == '\t' || *x->p == '\r')
		x->p++;
}

static bool entity(struct xp *x)
{
	static const char *const named[] = { "lt;", "gt;", "amp;", "quot;", "apos;" };

	x->p++;
	for (size_t i = 0; i < 5; i++)
		if (!strncmp(x->p, named[i], strlen(named[i]))) {
			x->p += strlen(named[i]);
			return true;
		}
	if (*x->p != '#')
		return false;
	x->p++;
	if (*x->p == 'x')
		x->p++;
	if (!isxdigit((unsigned char)*x->p))
		return false;
	while (isxdigit((unsigned char)*x->p))
		x->p++;
	return *x->p++ == ';';
}

/* The attributes the layout checks need, from <svg> and <text>. */
static void keep_attribute(struct xp *x, const char *elem, int depth,
			   const char *name, const char *v, size_t len)
{
	struct xml_text *t = x->st->ntexts < XML_MAX_TEXTS ?
			     &x->st->texts[x->st->ntexts] : NULL;
	char val[64];

	snprintf(val, sizeof(val), "%.*s", (int)(len < 63 ? len : 63), v);
	if (depth == 0 && !strcmp(name, "width"))
		x->st->width = atof(val);
	else if (depth == 0 && !strcmp(name, "height"))
		x->st->height = atof(val);
	if (strcmp(elem, "text") || !t)
		return;
	if (!strcmp(name, "x"))
		t->x = atof(val);
	else if (!strcmp(name, "y"))
		t->y = atof(val);
	else if (!strcmp(name, "font-size"))
		t->font_size = atof(val);
	else if (!strcmp(name, "text-anchor"))
		snprintf(t->anchor, sizeof(t->anchor), "%.15s", val);
}

static bool attributes(struct xp *x, const char *elem, int depth)
{
	char names[32][64];
	size_t n = 0;

	for (;;) {
		char q;

		skip_ws(x);
		if (*x->p == '>' || *x->p == '/')
			return true;
		if (n == 32 || !parse_name(x, names[n], sizeof(names[n])))
			return false;
		for (size_t i = 0; i < n; i++)
			if (!strcmp(names[i], names[n]))
				return false;	/* duplicate attribute */
		n++;
		skip_ws(x);
		if (*x->p++ != '=')
			return false;
		skip_ws(x);
		q = *x->p++;
		if (q != '"' && q != '\'')
			return false;
		const char *v = x->p;

		while (*x->p != q) {
			if (!*x->p || *x->p == '<')
				return false;
			if (*x->p == '&') {
				if (!entity(x))
					return false;
			} else {
				x->p++;
			}
		}
		keep_attribute(x, elem, depth, names[n - 1], v, (size_t)(x->p - v));
		x->p++;
	}
}

static bool element(struct xp *x, int depth);

/* Count a character of a <text> element's content and keep it. */
static void text_char(struct xp *x, const char *name, const char *from, size_t len)
{
	struct xml_text *t;
	size_t have;

	if (strcmp(name, "text") || x->st->ntexts >= XML_MAX_TEXTS)
		return;
	t = &x->st->texts[x->st->ntexts];
	have = strlen(t->s);
	if (((unsigned char)*from & 0xc0) != 0x80)
		t->chars++;
	if (have + len < sizeof(t->s))
		memcpy(t->s + have, from, len);
}

static bool content(struct xp *x, const char *name, int depth)
{
	for (;;) {
		if (!*x->p)
			return false;
		if (!strncmp(x->p, "<!--", 4)) {
			const char *end = strstr(x->p + 4, "-->");

			if (!end)
				return false;
			x->p = end + 3;
		} else if (!strncmp(x->p, "</", 2)) {
			char close[64];

			x->p += 2;
			if (!parse_name(x, close, sizeof(close)) || strcmp(close, name))
				return false;
			skip_ws(x);
			return *x->p++ == '>';
		} else if (*x->p == '<') {
			if (!element(x, depth + 1))
				return false;
		} else if (*x->p == '&') {
			const char *from = x->p;

			if (!entity(x))
				return false;
			text_char(x, name, from, (size_t)(x->p - from));
		} else if (*x->p == '>') {
			return false;
		} else {
			text_char(x, name, x->p, 1);
			x->p++;
		}
	}
}

static bool element(struct xp *x, int depth)
{
	char name[64];

	if (depth > 64 || *x->p++ != '<' || !parse_name(x, name, sizeof(name)))
		return false;
	x->st->elements++;
	if (x->count_name && !strcmp(name, x->count_name))
		x->st->named++;
	if (depth == 0)
		snprintf(x->st->root, sizeof(x->st->root), "%s", name);
	if (!attributes(x, name, depth))
		return false;
	if (!strncmp(x->p, "/>", 2)) {
		x->p += 2;
		x->st->ntexts += !strcmp(name, "text");
		return true;
	}
	x->p++;
	if (!content(x, name, depth))
		return false;
	x->st->ntexts += !strcmp(name, "text");
	return true;
}

bool xml_check(const char *doc, const char *count_name, struct xml_stats *st)
{
	struct xp x = { doc, count_name, st };

	memset(st, 0, sizeof(*st));
	if (!strncmp(x.p, "<?xml", 5)) {
		const char *end = strstr(x.p, "?>");

		if (!end)
			return false;
		x.p = end + 2;
	}
	skip_ws(&x);
	if (!element(&x, 0))
		return false;
	skip_ws(&x);
	return *x.p == '\0';
}
