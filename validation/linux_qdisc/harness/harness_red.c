/* RED: net/sched/sch_red.c with include/net/red.h, as the package ships them.
 *
 * Parameters: what tc sends (iproute2 tc/q_red.c), as the schedule's attributes: the fields
 * of struct tc_red_qopt (limit, qth_min, qth_max in bytes; Wlog, Plog, Scell_log), max_P
 * (TCA_RED_MAX_P, 2^-32 units), the 256-byte idle table in 32 words of 8 bytes
 * (stab0..stab31, each little-endian) and the flags, either as current tc sends them
 * (`flags`: TCA_RED_FLAGS, a bitfield with every supported flag selected, tc_red_qopt's
 * flags 0) or as tc before TCA_RED_FLAGS did (`qopt_flags`: in tc_red_qopt.flags, which is
 * what arms the adaptive timer in __red_change). harness_red_init assembles TCA_RED_PARMS,
 * TCA_RED_STAB, TCA_RED_MAX_P and TCA_RED_FLAGS from them, then runs red_init.
 *
 * The child: tc's `limit` makes __red_change create a bfifo (fifo_create_dflt); ours is the
 * kernel's bfifo_enqueue (net/sched/sch_fifo.c: accepted while the child's backlog plus the
 * packet is at most its limit in bytes) with the head dequeue of include/net/sch_generic.h.
 *
 * State after each event: struct red_vars (qavg in bytes << Wlog; qidlestart in ns, 0 when
 * not idle), parms.max_P and struct red_stats. */
#include "attrs.h"

enum {
	A_LIMIT = 100, A_QTH_MIN, A_QTH_MAX, A_WLOG, A_PLOG, A_SCELL_LOG, A_MAX_P, A_FLAGS,
	A_QOPT_FLAGS, A_STAB0,
};

static int bfifo_enqueue_child(struct sk_buff *skb, struct Qdisc *sch, struct sk_buff **to_free)
{
	if (sch->qstats.backlog + qdisc_pkt_len(skb) <= sch->limit)
		return qdisc_enqueue_tail(skb, sch);
	return qdisc_drop(skb, sch, to_free);
}

struct Qdisc_ops bfifo_qdisc_ops = {
	.id = "bfifo",
	.enqueue = bfifo_enqueue_child,
	.dequeue = qdisc_dequeue_head,
	.peek = qdisc_peek_head,
};

static struct Qdisc *fifo_create_dflt(struct Qdisc *sch, struct Qdisc_ops *ops, unsigned int limit,
				      struct netlink_ext_ack *extack)
{
	struct Qdisc *q = qdisc_create_dflt(sch->dev_queue, ops, 0x10001, extack);

	q->enqueue = ops->enqueue;
	q->dequeue = ops->dequeue;
	q->limit = limit;
	return q;
}

static struct tc_red_qopt harness_qopt;
static u8 harness_stab[RED_STAB_SIZE];
static struct nla_bitfield32 harness_flags;

static void harness_add(int type, u64 value, void *data)
{
	shim_attrs[shim_nattrs].nla_type = (u16)type;
	shim_attrs[shim_nattrs].aqmlab_value = value;
	shim_attrs[shim_nattrs].aqmlab_data = data;
	shim_nattrs++;
}

static int harness_red_init(struct Qdisc *sch, struct nlattr *opt, struct netlink_ext_ack *extack)
{
	u64 max_P = 0;
	bool bitfield = false;
	int n = shim_nattrs;

	for (int i = 0; i < n; i++) {
		u64 v = shim_attrs[i].aqmlab_value;
		int t = shim_attrs[i].nla_type;

		switch (t) {
		case A_LIMIT: harness_qopt.limit = (u32)v; break;
		case A_QTH_MIN: harness_qopt.qth_min = (u32)v; break;
		case A_QTH_MAX: harness_qopt.qth_max = (u32)v; break;
		case A_WLOG: harness_qopt.Wlog = (u8)v; break;
		case A_PLOG: harness_qopt.Plog = (u8)v; break;
		case A_SCELL_LOG: harness_qopt.Scell_log = (u8)v; break;
		case A_MAX_P: max_P = v; break;
		case A_QOPT_FLAGS: harness_qopt.flags = (u8)v; break;
		case A_FLAGS:
			/* q_red.c: every supported flag selected, the value the flags given. */
			harness_flags.value = (u32)v;
			harness_flags.selector = TC_RED_HISTORIC_FLAGS | TC_RED_NODROP;
			bitfield = true;
			break;
		default: memcpy(harness_stab + 8 * (t - A_STAB0), &v, 8); break;
		}
	}
	shim_nattrs = 0;
	harness_add(TCA_RED_PARMS, 0, &harness_qopt);
	harness_add(TCA_RED_STAB, 0, harness_stab);
	harness_add(TCA_RED_MAX_P, max_P, NULL);
	if (bitfield)
		harness_add(TCA_RED_FLAGS, 0, &harness_flags);
	return red_qdisc_ops.init(sch, opt, extack);
}

static const struct Qdisc_ops *harness_ops(void)
{
	static struct Qdisc_ops ops;

	ops = red_qdisc_ops;
	ops.init = harness_red_init;
	return &ops;
}

static int harness_attr(const char *name)
{
	static const struct harness_attr_name t[] = {
		{ "limit", A_LIMIT },	/* bytes */
		{ "qth_min", A_QTH_MIN },	/* bytes */
		{ "qth_max", A_QTH_MAX },
		{ "Wlog", A_WLOG },
		{ "Plog", A_PLOG },
		{ "Scell_log", A_SCELL_LOG },
		{ "max_P", A_MAX_P },
		{ "flags", A_FLAGS },
		{ "qopt_flags", A_QOPT_FLAGS },
	};
	int k;

	if (sscanf(name, "stab%d", &k) == 1 && k >= 0 && k < RED_STAB_SIZE / 8)
		return A_STAB0 + k;
	return harness_attr_lookup(t, ARRAY_SIZE(t), name);
}

static void harness_state(struct Qdisc *sch, FILE *out)
{
	struct red_sched_data *q = qdisc_priv(sch);
	const struct red_vars *v = &q->vars;
	const struct red_stats *s = &q->stats;

	fprintf(out,
		" qavg=%lu qcount=%d qR=%u qidlestart=%lld max_P=%u prob_drop=%u prob_mark=%u"
		" forced_drop=%u forced_mark=%u pdrop=%u",
		v->qavg, v->qcount, v->qR, (long long)v->qidlestart, q->parms.max_P, s->prob_drop,
		s->prob_mark, s->forced_drop, s->forced_mark, s->pdrop);
}

static struct timer_list *harness_timer(struct Qdisc *sch)
{
	struct red_sched_data *q = qdisc_priv(sch);

	return &q->adapt_timer;
}

#include "harness.h"
