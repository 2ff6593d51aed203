/* FQ-CoDel: net/sched/sch_fq_codel.c with include/net/codel*.h, as the package ships them.
 * State after each event: tc's fq_codel counters, the new and old lists in order, and every
 * flow that is on a list or has queued bytes or CoDel state (deficit, backlog, codel_vars in
 * codel time). */
#include "attrs.h"

static const struct Qdisc_ops *harness_ops(void) { return &fq_codel_qdisc_ops; }

static int harness_attr(const char *name)
{
	static const struct harness_attr_name t[] = {
		{ "target", TCA_FQ_CODEL_TARGET },	/* µs */
		{ "limit", TCA_FQ_CODEL_LIMIT },
		{ "interval", TCA_FQ_CODEL_INTERVAL },	/* µs */
		{ "ecn", TCA_FQ_CODEL_ECN },
		{ "flows", TCA_FQ_CODEL_FLOWS },
		{ "quantum", TCA_FQ_CODEL_QUANTUM },
		{ "ce_threshold", TCA_FQ_CODEL_CE_THRESHOLD },	/* µs */
		{ "drop_batch", TCA_FQ_CODEL_DROP_BATCH_SIZE },
		{ "memory_limit", TCA_FQ_CODEL_MEMORY_LIMIT },
		{ "ce_threshold_selector", TCA_FQ_CODEL_CE_THRESHOLD_SELECTOR },
		{ "ce_threshold_mask", TCA_FQ_CODEL_CE_THRESHOLD_MASK },
	};
	return harness_attr_lookup(t, ARRAY_SIZE(t), name);
}

static void print_list(FILE *out, const char *name, struct fq_codel_sched_data *q, struct list_head *head)
{
	struct fq_codel_flow *f;
	const char *sep = "";

	fprintf(out, " %s=", name);
	list_for_each_entry(f, head, flowchain) {
		fprintf(out, "%s%ld", sep, (long)(f - q->flows));
		sep = ",";
	}
}

static void harness_state(struct Qdisc *sch, FILE *out)
{
	struct fq_codel_sched_data *q = qdisc_priv(sch);
	const char *sep = "";

	fprintf(out,
		" new_flow_count=%u drop_overlimit=%u drop_overmemory=%u ecn_mark=%u ce_mark=%u"
		" maxpacket=%u memory_usage=%u",
		q->new_flow_count, q->drop_overlimit, q->drop_overmemory, q->cstats.ecn_mark,
		q->cstats.ce_mark, q->cstats.maxpacket, q->memory_usage);
	print_list(out, "new", q, &q->new_flows);
	print_list(out, "old", q, &q->old_flows);
	fprintf(out, " flows=");
	for (u32 i = 0; i < q->flows_cnt; i++) {
		const struct fq_codel_flow *f = &q->flows[i];
		const struct codel_vars *v = &f->cvars;

		if (list_empty(&f->flowchain) && !q->backlogs[i] && !v->count && !v->first_above_time)
			continue;
		fprintf(out, "%s%u:%d:%u:%u:%u:%d:%u:%u:%u", sep, i, f->deficit, q->backlogs[i],
			v->count, v->lastcount, v->dropping, v->rec_inv_sqrt, v->first_above_time,
			v->drop_next);
		sep = ";";
	}
}

static struct timer_list *harness_timer(struct Qdisc *sch) { (void)sch; return NULL; }

#include "harness.h"
