/* CAKE: net/sched/sch_cake.c as the package ships it. The harness's packets carry no
 * headers (shim/kshim_net.h): every packet is DSCP 0 and the flow hash is skb->hash, so the
 * cases use flow isolation `flows` (no host hashing). State after each event: the shaper's
 * time_next_packet and buffer_used, per tin its flow counts, deficit, schedule and counters,
 * its new/old/decaying lists in order, and every flow that is on a list, has queued bytes or
 * a COBALT count: deficit, backlog, set, and cobalt_vars (count, rec_inv_sqrt, drop_next,
 * blue_timer, p_drop, dropping). */
#include "attrs.h"

static const struct Qdisc_ops *harness_ops(void) { return &cake_qdisc_ops; }

static int harness_attr(const char *name)
{
	static const struct harness_attr_name t[] = {
		{ "bandwidth", TCA_CAKE_BASE_RATE64 },	/* bytes/s */
		{ "diffserv", TCA_CAKE_DIFFSERV_MODE },	/* CAKE_DIFFSERV_* */
		{ "flow_mode", TCA_CAKE_FLOW_MODE },	/* CAKE_FLOW_* */
		{ "rtt", TCA_CAKE_RTT },	/* µs */
		{ "target", TCA_CAKE_TARGET },	/* µs */
		{ "memory", TCA_CAKE_MEMORY },	/* bytes */
		{ "overhead", TCA_CAKE_OVERHEAD },
		{ "mpu", TCA_CAKE_MPU },
		{ "atm", TCA_CAKE_ATM },
		{ "wash", TCA_CAKE_WASH },
		{ "ack_filter", TCA_CAKE_ACK_FILTER },
		{ "split_gso", TCA_CAKE_SPLIT_GSO },
		{ "raw", TCA_CAKE_RAW },
		{ "nat", TCA_CAKE_NAT },
		{ "autorate", TCA_CAKE_AUTORATE },
		{ "ingress", TCA_CAKE_INGRESS },
		{ "fwmark", TCA_CAKE_FWMARK },
	};
	return harness_attr_lookup(t, ARRAY_SIZE(t), name);
}

static void print_list(FILE *out, const char *name, u32 t, struct cake_tin_data *b, struct list_head *head)
{
	struct cake_flow *f;
	const char *sep = "";

	fprintf(out, " %s%u=", name, t);
	list_for_each_entry(f, head, flowchain) {
		fprintf(out, "%s%ld", sep, (long)(f - b->flows));
		sep = ",";
	}
}

static void harness_state(struct Qdisc *sch, FILE *out)
{
	struct cake_sched_data *q = qdisc_priv(sch);

	fprintf(out, " buffer_used=%u time_next_packet=%lld", q->buffer_used,
		(long long)q->time_next_packet);
	for (u32 t = 0; t < q->tin_cnt; t++) {
		struct cake_tin_data *b = &q->tins[t];
		const char *sep = "";

		fprintf(out, " tin%u=%u:%u:%u:%u:%d:%lld:%u:%u:%u", t, b->sparse_flow_count,
			b->bulk_flow_count, b->decaying_flow_count, b->unresponsive_flow_count,
			b->tin_deficit, (long long)b->time_next_packet, b->packets, b->tin_dropped,
			b->tin_ecn_mark);
		print_list(out, "new", t, b, &b->new_flows);
		print_list(out, "old", t, b, &b->old_flows);
		print_list(out, "decaying", t, b, &b->decaying_flows);
		fprintf(out, " flows%u=", t);
		for (u32 i = 0; i < CAKE_QUEUES; i++) {
			struct cake_flow *f = &b->flows[i];
			struct cobalt_vars *v = &f->cvars;

			if (list_empty(&f->flowchain) && !b->backlogs[i] && !v->count)
				continue;
			fprintf(out, "%s%u:%d:%u:%u:%u:%u:%lld:%lld:%u:%d", sep, i, f->deficit,
				b->backlogs[i], f->set, v->count, v->rec_inv_sqrt,
				(long long)v->drop_next, (long long)v->blue_timer, v->p_drop,
				v->dropping);
			sep = ";";
		}
	}
}

static struct timer_list *harness_timer(struct Qdisc *sch) { (void)sch; return NULL; }

#include "harness.h"
