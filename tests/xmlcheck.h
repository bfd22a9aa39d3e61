/* xmlcheck.h - a strict XML well-formedness checker for the tests (the SVG
 * output is parsed, not string-matched). */
#ifndef FLASHPROBE_TESTS_XMLCHECK_H
#define FLASHPROBE_TESTS_XMLCHECK_H

#include <stdbool.h>
#include <stddef.h>

#define XML_MAX_TEXTS 600

/* A <text> element: its position attributes and its content. */
struct xml_text {
	double x, y, font_size;	/* 0 where the attribute is missing */
	char anchor[16];	/* text-anchor, "" when missing */
	size_t chars;		/* characters of the content (an entity is one) */
	char s[96];		/* the content, entities left as written */
};

struct xml_stats {
	char root[64];		/* name of the root element */
	double width, height;	/* of the root element, 0 when missing */
	size_t elements;	/* all elements */
	size_t named;		/* elements whose name equals the one asked for */
	struct xml_text texts[XML_MAX_TEXTS];	/* the first <text> elements */
	size_t ntexts;		/* all <text> elements, also those not kept */
};

/* true when doc is one well-formed XML document (optional declaration,
 * one root element, balanced tags, quoted unique attributes, valid entity
 * references).  Counts elements named count_name into st->named. */
bool xml_check(const char *doc, const char *count_name, struct xml_stats *st);

#endif
