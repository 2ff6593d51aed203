/* CoDel: net/sched/sch_codel.c with include/net/codel.h and codel_impl.h, as the package
 * ships them (build.py passes the file with -include, so its static functions are ours to
 * call). State after each event: struct codel_vars in codel time (1024-ns units), the
 * codel_stats and tc's drop_overlimit. */
#include "attrs.h"

static const struct Qdisc_ops *harness_ops(void) { return &codel_qdisc_ops; }

static int harness_attr(const char *name)
{
	static const struct harness_attr_name t[] = {
		{ "target", TCA_CODEL_TARGET },	/* µs */
		{ "limit", TCA_CODEL_LIMIT },
		{ "interval", TCA_CODEL_INTERVAL },	/* µs */
		{ "ecn", TCA_CODEL_ECN },
		{ "ce_threshold", TCA_CODEL_CE_THRESHOLD },	/* µs */
	};
	return harness_attr_lookup(t, ARRAY_SIZE(t), name);
}

static void harness_state(struct Qdisc *sch, FILE *out)
{
	struct codel_sched_data *q = qdisc_priv(sch);
	const struct codel_vars *v = &q->vars;

	fprintf(out,
		" count=%u lastcount=%u dropping=%d rec_inv_sqrt=%u first_above=%u drop_next=%u"
		" ldelay=%u maxpacket=%u ecn_mark=%u ce_mark=%u drop_overlimit=%u",
		v->count, v->lastcount, v->dropping, v->rec_inv_sqrt, v->first_above_time,
		v->drop_next, v->ldelay, q->stats.maxpacket, q->stats.ecn_mark, q->stats.ce_mark,
		q->drop_overlimit);
}

static struct timer_list *harness_timer(struct Qdisc *sch) { (void)sch; return NULL; }

#include "harness.h"
