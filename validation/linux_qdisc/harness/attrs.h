#include <stdio.h>

/* Tc attribute names of a harness: the schedule's `A <name> <value>` lines. */
struct harness_attr_name {
	const char *name;
	int nr;
};

static int harness_attr_lookup(const struct harness_attr_name *t, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return t[i].nr;
	return -1;
}
