/* xmlcheck.h - a strict XML well-formedness checker for the tests (the SVG
 * output is parsed, not string-matched). */
#ifndef FLASHPROBE_TESTS_XMLCHECK_H
#define FLASHPROBE_TESTS_XMLCHECK_H

#include <stdbool.h>
#include <stddef.h>

struct xml_stats {
	char root[64];		/* name of the root element */
	size_t elements;	/* all elements */
	size_t named;		/* elements whose name equals the one asked for */
};

/* true when doc is one well-formed XML document (optional declaration,
 * one root element, balanced tags, quoted unique attributes, valid entity
 * references).  Counts elements named count_name into st->named. */
bool xml_check(const char *doc, const char *count_name, struct xml_stats *st);

#endif
