/* The event loop shared by the per-discipline harnesses (harness_<qdisc>.c), which include a
 * kernel discipline's .c file, then define the hooks below, then include this file.
 *
 *   harness RANDOM_FILE < schedule > log
 *
 * RANDOM_FILE: the 32-bit words (little-endian) every kernel random call takes in turn.
 * The schedule (validation/linux_qdisc/schedule.py writes it), one event per line:
 *   A <attribute> <value>    a tc attribute for the discipline's change() (before the first
 *                            event; the discipline is created with them at the first event)
 *   E <t_ns> <bytes> <ds> <hash>   a packet arrives (ds: its DS byte, only the ECN bits)
 *   D <t_ns>                 the link asks for a packet
 *   T <t_ns>                 the discipline's timer fires (if armed)
 * The log, one line per event, in the format our replay writes too
 * (crates/aqmlab/src/aqm/schedule_replay.rs):
 *   e <id> ok|ce|drop[ x <id>...] | <state>       the arrival's fate and the other packets
 *                                                 dropped meanwhile, in drop order
 *   d <id>|-[ ce][ x <id>...] | <state>           the packet sent (CE-marked on the way out)
 *                                                 and the packets dropped before it
 *   t[ off| due <jiffy>] | <state>                the timer ran (off: it was not armed;
 *                                                 due: it was armed for another jiffy, or
 *                                                 for a high-resolution timer another ns)
 * <state> is `k=v` pairs: the queue's tc counters, the random words consumed, then the
 * discipline's own (harness_state). */
#include <stdio.h>
#include <inttypes.h>

/* Hooks of the discipline's harness. */
static const struct Qdisc_ops *harness_ops(void);
static int harness_attr(const char *name);	/* tc attribute number, or -1 */
static void harness_state(struct Qdisc *sch, FILE *out);
static struct timer_list *harness_timer(struct Qdisc *sch);	/* NULL: no timer */
#ifdef HARNESS_HRTIMER
/* A discipline on a high-resolution timer (DualPI2) names it; harness_timer returns NULL. */
static struct hrtimer *harness_hrtimer(struct Qdisc *sch);
#endif

static u32 *rnd_words;
static size_t rnd_n, rnd_pos;

static u32 shim_random_u32(void)
{
	if (rnd_pos >= rnd_n) {
		fprintf(stderr, "harness: the random stream is exhausted (%zu words)\n", rnd_n);
		exit(3);
	}
	return rnd_words[rnd_pos++];
}

/* Drops reported while an event runs, in drop order. */
static char drops[1 << 16];
static size_t drops_len;

static void note_drop(u32 id)
{
	if (drops_len + 16 < sizeof(drops))
		drops_len += (size_t)snprintf(drops + drops_len, sizeof(drops) - drops_len, " x %u", id);
}

static void shim_freed(struct sk_buff *skb, bool dropped)
{
	if (dropped)
		note_drop(skb->aqmlab_id);
	free(skb);
}

static void load_random(const char *path)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16;

	if (!f) {
		perror(path);
		exit(2);
	}
	rnd_words = malloc(cap * sizeof(u32));
	for (;;) {
		if (rnd_n == cap) {
			cap *= 2;
			rnd_words = realloc(rnd_words, cap * sizeof(u32));
		}
		size_t got = fread(rnd_words + rnd_n, sizeof(u32), cap - rnd_n, f);
		if (got == 0)
			break;
		rnd_n += got;
	}
	fclose(f);
}

static void print_state(struct Qdisc *sch)
{
	printf(" | qlen=%u backlog=%u drops=%u overlimits=%u rnd=%zu", sch->q.qlen,
	       sch->qstats.backlog, sch->qstats.drops, sch->qstats.overlimits, rnd_pos);
	harness_state(sch, stdout);
	putchar('\n');
}

static void set_time(u64 t)
{
	shim_now_ns = t;
	jiffies = (unsigned long)(t / (NSEC_PER_SEC / HZ));
}

int main(int argc, char **argv)
{
	static struct net_device dev = { .mtu = 1500, .hard_header_len = 14, .tx_queue_len = 1000 };
	static struct netdev_queue devq = { .dev = &dev };
	const struct Qdisc_ops *ops = harness_ops();
	struct Qdisc *sch = calloc(1, sizeof(struct Qdisc) + (size_t)ops->priv_size + 64);
	char line[256];
	u32 next_id = 0;
	bool created = false;

	if (argc != 2) {
		fprintf(stderr, "usage: %s RANDOM_FILE < schedule\n", argv[0]);
		return 2;
	}
	load_random(argv[1]);
	sch->ops = ops;
	sch->enqueue = ops->enqueue;
	sch->dequeue = ops->dequeue;
	sch->dev_queue = &devq;
	sch->handle = 0x10000;
	sch->parent = 0xFFFFFFFF;
	sch->limit = 0;
	while (fgets(line, sizeof(line), stdin)) {
		char kind = line[0];
		char name[64];
		unsigned long long t, value;
		unsigned int bytes, ds, hash;

		if (kind == '\n' || kind == '#')
			continue;
		if (kind == 'A') {
			if (sscanf(line, "A %63s %llu", name, &value) != 2 || harness_attr(name) < 0 ||
			    shim_nattrs == (int)ARRAY_SIZE(shim_attrs)) {
				fprintf(stderr, "harness: bad attribute line: %s", line);
				return 2;
			}
			shim_attrs[shim_nattrs].nla_type = (u16)harness_attr(name);
			shim_attrs[shim_nattrs].aqmlab_value = value;
			shim_nattrs++;
			continue;
		}
		if (!created) {
			static struct nlattr opt;
			int err = ops->init(sch, shim_nattrs ? &opt : NULL, NULL);

			if (err) {
				fprintf(stderr, "harness: init failed: %d\n", err);
				return 2;
			}
			created = true;
		}
		drops_len = 0;
		drops[0] = 0;
		if (kind == 'E' && sscanf(line, "E %llu %u %u %u", &t, &bytes, &ds, &hash) == 4) {
			struct sk_buff *skb = calloc(1, sizeof(*skb));
			struct sk_buff *to_free = NULL, *rev = NULL;
			bool self_dropped = false;
			u32 id = next_id++;

			set_time(t);
			skb->len = bytes;
			skb->truesize = bytes;
			skb->hash = hash;
			skb->l4_hash = 1;
			skb->protocol = 0x0008; /* htons(ETH_P_IP) on a little-endian host */
			skb->aqmlab_id = id;
			skb->aqmlab_ds = (u8)ds;
			qdisc_skb_cb(skb)->pkt_len = bytes;
			ops->enqueue(skb, sch, &to_free);
			/* __qdisc_drop pushes at the front: reversed, the list is in drop order. */
			while (to_free) {
				struct sk_buff *n = to_free->next;

				to_free->next = rev;
				rev = to_free;
				to_free = n;
			}
			char others[sizeof(drops)];
			size_t olen = 0;

			others[0] = 0;
			while (rev) {
				struct sk_buff *n = rev->next;

				if (rev->aqmlab_id == id)
					self_dropped = true;
				else if (olen + 16 < sizeof(others))
					olen += (size_t)snprintf(others + olen, sizeof(others) - olen, " x %u",
								 rev->aqmlab_id);
				free(rev);
				rev = n;
			}
			const char *fate = "ok";

			if (self_dropped) {
				fate = "drop";
			} else {
				if (skb->aqmlab_ds != (u8)ds)
					fate = "ce";
				skb->aqmlab_ds_enqueued = skb->aqmlab_ds;
			}
			printf("e %u %s%s%s", id, fate, others, drops);
		} else if (kind == 'D' && sscanf(line, "D %llu", &t) == 1) {
			set_time(t);
			struct sk_buff *skb = ops->dequeue(sch);

			if (skb) {
				bool ce = skb->aqmlab_ds != skb->aqmlab_ds_enqueued;

				printf("d %u%s%s", skb->aqmlab_id, ce ? " ce" : "", drops);
				consume_skb(skb);
			} else {
				printf("d -%s", drops);
			}
		} else if (kind == 'T' && sscanf(line, "T %llu", &t) == 1) {
			struct timer_list *timer = harness_timer(sch);
#ifdef HARNESS_HRTIMER
			struct hrtimer *hr = harness_hrtimer(sch);

			set_time(t);
			if (hr && hr->pending) {
				/* Fired at the schedule's instant; a timer due at another ns says so. */
				ktime_t due = hr->expires;

				hr->pending = hr->function(hr) == HRTIMER_RESTART;
				if (due != (ktime_t)t)
					printf("t due %lld%s", (long long)due, drops);
				else
					printf("t%s", drops);
				print_state(sch);
				continue;
			}
#endif

			set_time(t);
			if (timer && timer->pending) {
				/* A timer due at another jiffy than the schedule's instant says so. */
				unsigned long due = timer->expires;

				timer->pending = false;
				timer->function(timer);
				if (due != jiffies)
					printf("t due %lu%s", due, drops);
				else
					printf("t%s", drops);
			} else {
				printf("t off");
			}
		} else {
			fprintf(stderr, "harness: bad event line: %s", line);
			return 2;
		}
		print_state(sch);
	}
	return 0;
}
