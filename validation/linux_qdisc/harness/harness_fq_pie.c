/* FQ-PIE: net/sched/sch_fq_pie.c with sch_pie.c (its pie_drop_early, pie_process_dequeue and
 * pie_calculate_probability) and include/net/pie.h, as the package ships them. State after
 * each event: tc's fq_pie counters, the new and old lists in order, and every flow that is on
 * a list, has queued bytes or a probability: deficit, backlog, qlen and its pie_vars (psched
 * ticks; probability in units of MAX_PROB). */
#include "attrs.h"

static const struct Qdisc_ops *harness_ops(void) { return &fq_pie_qdisc_ops; }

static int harness_attr(const char *name)
{
	static const struct harness_attr_name t[] = {
		{ "limit", TCA_FQ_PIE_LIMIT },
		{ "flows", TCA_FQ_PIE_FLOWS },
		{ "target", TCA_FQ_PIE_TARGET },	/* µs */
		{ "tupdate", TCA_FQ_PIE_TUPDATE },	/* µs */
		{ "alpha", TCA_FQ_PIE_ALPHA },
		{ "beta", TCA_FQ_PIE_BETA },
		{ "quantum", TCA_FQ_PIE_QUANTUM },
		{ "memory_limit", TCA_FQ_PIE_MEMORY_LIMIT },
		{ "ecn_prob", TCA_FQ_PIE_ECN_PROB },
		{ "ecn", TCA_FQ_PIE_ECN },
		{ "bytemode", TCA_FQ_PIE_BYTEMODE },
		{ "dq_rate_estimator", TCA_FQ_PIE_DQ_RATE_ESTIMATOR },
	};
	return harness_attr_lookup(t, ARRAY_SIZE(t), name);
}

static void print_list(FILE *out, const char *name, struct fq_pie_sched_data *q, struct list_head *head)
{
	struct fq_pie_flow *f;
	const char *sep = "";

	fprintf(out, " %s=", name);
	list_for_each_entry(f, head, flowchain) {
		fprintf(out, "%s%ld", sep, (long)(f - q->flows));
		sep = ",";
	}
}

static void harness_state(struct Qdisc *sch, FILE *out)
{
	struct fq_pie_sched_data *q = qdisc_priv(sch);
	const char *sep = "";

	fprintf(out,
		" packets_in=%u dropped=%u overlimit=%u overmemory=%u ecn_mark=%u new_flow_count=%u"
		" memory_usage=%u",
		q->stats.packets_in, q->stats.dropped, q->stats.overlimit, q->overmemory,
		q->stats.ecn_mark, q->new_flow_count, q->memory_usage);
	print_list(out, "new", q, &q->new_flows);
	print_list(out, "old", q, &q->old_flows);
	fprintf(out, " flows=");
	for (u32 i = 0; i < q->flows_cnt; i++) {
		const struct fq_pie_flow *f = &q->flows[i];
		const struct pie_vars *v = &f->vars;

		if (list_empty(&f->flowchain) && !f->backlog && !v->prob && !v->accu_prob)
			continue;
		fprintf(out, "%s%u:%d:%u:%u:%llu:%llu:%llu:%llu:%llu:%llu", sep, i, f->deficit,
			f->backlog, f->qlen, (unsigned long long)v->prob,
			(unsigned long long)v->accu_prob, (unsigned long long)v->qdelay,
			(unsigned long long)v->qdelay_old, (unsigned long long)v->burst_time,
			(unsigned long long)v->dq_tstamp);
		sep = ";";
	}
}

static struct timer_list *harness_timer(struct Qdisc *sch)
{
	struct fq_pie_sched_data *q = qdisc_priv(sch);

	return &q->adapt_timer;
}

#include "harness.h"
