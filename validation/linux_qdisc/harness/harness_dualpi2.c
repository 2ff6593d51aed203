/* DualPI2: net/sched/sch_dualpi2.c (Linux 6.17 and later) and the uapi pkt_sched.h of the same
 * tree, from the directory AQMLAB_DUALPI2_SOURCE names (validation/linux_qdisc/kernel.py).
 * Packets carry a readable IPv4 header whose DS byte is theirs (shim_ip_header), so that
 * dualpi2_read_ect finds their ECN field and the default ecn_mask (ECT(1)) sends ECT(1) and
 * CE to the L queue. The probability timer is the hrtimer pi2_timer (first due tupdate after
 * creation, at t = 0, then tupdate after each run).
 * State after each event: pi2_prob (units of 2^-32, MAX_PROB = 2^32 - 1), last_qdelay and the
 * head enqueue times (ns; 0 = empty queue), the WRR credit (bytes x %), the L queue's length,
 * the counters of tc -s (packets_in_c/l, maxq, ecn_mark, step_marks) and memory_used. */
#include "attrs.h"

#define HARNESS_HRTIMER

static const struct Qdisc_ops *harness_ops(void)
{
	shim_ip_header = true;
	return &dualpi2_qdisc_ops;
}

static int harness_attr(const char *name)
{
	static const struct harness_attr_name t[] = {
		{ "limit", TCA_DUALPI2_LIMIT },	/* packets */
		{ "memory_limit", TCA_DUALPI2_MEMORY_LIMIT },	/* bytes */
		{ "target", TCA_DUALPI2_TARGET },	/* µs */
		{ "tupdate", TCA_DUALPI2_TUPDATE },	/* µs */
		{ "alpha", TCA_DUALPI2_ALPHA },	/* Hz × 256 */
		{ "beta", TCA_DUALPI2_BETA },	/* Hz × 256 */
		{ "step_thresh_pkts", TCA_DUALPI2_STEP_THRESH_PKTS },
		{ "step_thresh_us", TCA_DUALPI2_STEP_THRESH_US },
		{ "min_qlen_step", TCA_DUALPI2_MIN_QLEN_STEP },
		{ "coupling", TCA_DUALPI2_COUPLING },
		{ "drop_overload", TCA_DUALPI2_DROP_OVERLOAD },	/* 0 overflow, 1 drop */
		{ "drop_early", TCA_DUALPI2_DROP_EARLY },	/* 0 dequeue, 1 enqueue */
		{ "c_protection", TCA_DUALPI2_C_PROTECTION },	/* % */
		{ "ecn_mask", TCA_DUALPI2_ECN_MASK },
		{ "split_gso", TCA_DUALPI2_SPLIT_GSO },
	};
	return harness_attr_lookup(t, ARRAY_SIZE(t), name);
}

static void harness_state(struct Qdisc *sch, FILE *out)
{
	struct dualpi2_sched_data *q = qdisc_priv(sch);

	fprintf(out,
		" prob=%u last_qdelay=%llu c_head_ts=%llu l_head_ts=%llu credit=%d l_qlen=%u"
		" packets_in_c=%u packets_in_l=%u maxq=%u ecn_mark=%u step_marks=%u memory_used=%u",
		q->pi2_prob, (unsigned long long)q->last_qdelay, (unsigned long long)q->c_head_ts,
		(unsigned long long)q->l_head_ts, q->c_protection_credit, q->l_queue->q.qlen,
		q->packets_in_c, q->packets_in_l, q->maxq, q->ecn_mark, q->step_marks,
		q->memory_used);
}

static struct timer_list *harness_timer(struct Qdisc *sch) { (void)sch; return NULL; }

static struct hrtimer *harness_hrtimer(struct Qdisc *sch)
{
	struct dualpi2_sched_data *q = qdisc_priv(sch);

	return &q->pi2_timer;
}

#include "harness.h"
