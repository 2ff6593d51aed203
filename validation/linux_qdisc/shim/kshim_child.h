/* The part of our shim for a discipline with a child qdisc, qevents and offload hooks (RED:
 * net/sched/sch_red.c). Our own minimal definitions, included by kshim.h:
 * - the child FIFO: `bfifo_qdisc_ops` and `fifo_create_dflt` are only declared here; the
 *   harness that needs them defines them (harness_red.c, after net/sched/sch_fifo.c's
 *   bfifo_enqueue: accept while backlog + length <= limit bytes), and qdisc_enqueue,
 *   qdisc_dequeue_peeked call the child's own enqueue/dequeue (include/net/sch_generic.h);
 * - net_xmit_drop_count: every refusal but a stolen packet counts (include/linux/netdevice.h);
 * - qevents (include/net/pkt_cls.h): no blocks are bound, tcf_qevent_handle hands the packet
 *   back unchanged;
 * - offload: no device offloads (tc_can_offload false), so the offload structures only need
 *   to compile. */
#ifndef AQMLAB_KSHIM_CHILD_H
#define AQMLAB_KSHIM_CHILD_H

#define TCQ_F_OFFLOADED 0x200
#define TC_H_MIN(h) ((h) & 0x0000FFFFU)
#define NETIF_F_HW_TC 0
#define NLA_POLICY_BITFIELD32(valid) { .type = NLA_BITFIELD32 }
/* include/linux/math.h: round to the nearest, in the type of the dividend. */
#define DIV_ROUND_CLOSEST(x, divisor)                                                          \
	({                                                                                     \
		__typeof__(x) __x = x;                                                         \
		__typeof__(divisor) __d = divisor;                                             \
		(((__typeof__(x))-1) > 0 || ((__typeof__(divisor))-1) > 0 ||                   \
		 (((__x) > 0) == ((__d) > 0))) ?                                               \
			(((__x) + ((__d) / 2)) / (__d)) :                                      \
			(((__x) - ((__d) / 2)) / (__d));                                       \
	})

static inline struct nla_bitfield32 nla_get_bitfield32(const struct nlattr *n)
{
	struct nla_bitfield32 bf;

	memcpy(&bf, nla_data(n), sizeof(bf));
	return bf;
}
static inline int nla_put_bitfield32(struct sk_buff *s, int t, u32 v, u32 sel)
{
	(void)s; (void)t; (void)v; (void)sel;
	return 0;
}

static inline int net_xmit_drop_count(int e) { return (e & __NET_XMIT_STOLEN) ? 0 : 1; }

/* The child: a Qdisc whose own ops act on its own queue and counters. */
extern struct Qdisc_ops bfifo_qdisc_ops;
static struct Qdisc *fifo_create_dflt(struct Qdisc *sch, struct Qdisc_ops *ops, unsigned int limit,
				      struct netlink_ext_ack *extack);
static struct Qdisc noop_qdisc = { .flags = TCQ_F_BUILTIN };
static inline int qdisc_enqueue(struct sk_buff *skb, struct Qdisc *sch, struct sk_buff **to_free)
{
	return sch->enqueue(skb, sch, to_free);
}
static inline struct sk_buff *qdisc_dequeue_peeked(struct Qdisc *sch) { return sch->dequeue(sch); }
static inline void qdisc_hash_add(struct Qdisc *q, bool invisible) { (void)q; (void)invisible; }
static inline void qdisc_reset(struct Qdisc *q) { qdisc_reset_queue(q); }
static inline void qdisc_purge_queue(struct Qdisc *q) { if (q != &noop_qdisc) qdisc_reset_queue(q); }
static inline struct Qdisc *qdisc_replace(struct Qdisc *sch, struct Qdisc *n, struct Qdisc **pold)
{
	struct Qdisc *old = *pold;

	(void)sch;
	*pold = n;
	return old;
}

/* qevents: nothing bound. */
struct tcf_qevent { struct tcf_block *block; u32 block_index; };
enum { FLOW_BLOCK_BINDER_TYPE_RED_EARLY_DROP = 3, FLOW_BLOCK_BINDER_TYPE_RED_MARK };
static inline int tcf_qevent_init(struct tcf_qevent *qe, struct Qdisc *sch, int binder, struct nlattr *a,
				  struct netlink_ext_ack *e)
{
	(void)qe; (void)sch; (void)binder; (void)a; (void)e;
	return 0;
}
static inline void tcf_qevent_destroy(struct tcf_qevent *qe, struct Qdisc *sch) { (void)qe; (void)sch; }
static inline int tcf_qevent_validate_change(struct tcf_qevent *qe, struct nlattr *a, struct netlink_ext_ack *e)
{
	(void)qe; (void)a; (void)e;
	return 0;
}
static inline struct sk_buff *tcf_qevent_handle(struct tcf_qevent *qe, struct Qdisc *sch, struct sk_buff *skb,
						struct sk_buff **to_free, int *ret)
{
	(void)qe; (void)sch; (void)to_free; (void)ret;
	return skb;
}
static inline int tcf_qevent_dump(struct sk_buff *skb, int attr, struct tcf_qevent *qe)
{
	(void)skb; (void)attr; (void)qe;
	return 0;
}

/* Offload: never (no device offloads here). */
enum tc_setup_type { TC_SETUP_QDISC_RED = 9 };
enum tc_red_command { TC_RED_REPLACE, TC_RED_DESTROY, TC_RED_STATS, TC_RED_XSTATS, TC_RED_GRAFT };
struct tc_qopt_offload_stats { struct gnet_stats_basic_sync *bstats; struct gnet_stats_queue *qstats; };
struct red_stats;
struct tc_red_qopt_offload_params {
	u32 min, max, probability, limit;
	bool is_ecn, is_harddrop, is_nodrop;
	struct gnet_stats_queue *qstats;
};
struct tc_red_qopt_offload {
	enum tc_red_command command;
	u32 handle;
	u32 parent;
	union {
		struct tc_red_qopt_offload_params set;
		struct tc_qopt_offload_stats stats;
		struct red_stats *xstats;
		u32 child_handle;
	};
};
struct net_device_ops { int (*ndo_setup_tc)(struct net_device *dev, enum tc_setup_type t, void *data); };
static inline bool tc_can_offload(const struct net_device *dev) { (void)dev; return false; }
static inline int qdisc_offload_dump_helper(struct Qdisc *q, enum tc_setup_type t, void *data)
{
	(void)q; (void)t; (void)data;
	return 0;
}
static inline void qdisc_offload_graft_helper(struct net_device *dev, struct Qdisc *sch, struct Qdisc *n,
					      struct Qdisc *old, enum tc_setup_type t, void *data,
					      struct netlink_ext_ack *e)
{
	(void)dev; (void)sch; (void)n; (void)old; (void)t; (void)data; (void)e;
}

#endif
