/* PIE: net/sched/sch_pie.c with include/net/pie.h, as the package ships them. State after
 * each event: struct pie_vars (psched ticks of 64 ns; probability in units of MAX_PROB =
 * 2^56 - 1; DTIME_INVALID and DQCOUNT_INVALID print as 2^64 - 1) and struct pie_stats. */
#include "attrs.h"

static const struct Qdisc_ops *harness_ops(void) { return &pie_qdisc_ops; }

static int harness_attr(const char *name)
{
	static const struct harness_attr_name t[] = {
		{ "target", TCA_PIE_TARGET },	/* µs */
		{ "limit", TCA_PIE_LIMIT },
		{ "tupdate", TCA_PIE_TUPDATE },	/* µs */
		{ "alpha", TCA_PIE_ALPHA },
		{ "beta", TCA_PIE_BETA },
		{ "ecn", TCA_PIE_ECN },
		{ "bytemode", TCA_PIE_BYTEMODE },
		{ "dq_rate_estimator", TCA_PIE_DQ_RATE_ESTIMATOR },
	};
	return harness_attr_lookup(t, ARRAY_SIZE(t), name);
}

static void print_vars(FILE *out, const struct pie_vars *v)
{
	fprintf(out,
		" prob=%llu accu_prob=%llu qdelay=%llu qdelay_old=%llu burst_time=%llu"
		" dq_tstamp=%llu dq_count=%llu avg_dq_rate=%u",
		(unsigned long long)v->prob, (unsigned long long)v->accu_prob,
		(unsigned long long)v->qdelay, (unsigned long long)v->qdelay_old,
		(unsigned long long)v->burst_time, (unsigned long long)v->dq_tstamp,
		(unsigned long long)v->dq_count, v->avg_dq_rate);
}

static void harness_state(struct Qdisc *sch, FILE *out)
{
	struct pie_sched_data *q = qdisc_priv(sch);

	print_vars(out, &q->vars);
	fprintf(out, " packets_in=%u dropped=%u overlimit=%u ecn_mark=%u maxq=%u",
		q->stats.packets_in, q->stats.dropped, q->stats.overlimit, q->stats.ecn_mark,
		q->stats.maxq);
}

static struct timer_list *harness_timer(struct Qdisc *sch)
{
	struct pie_sched_data *q = qdisc_priv(sch);

	return &q->adapt_timer;
}

#include "harness.h"
