/* The user-space stand-in for the kernel headers that Linux's queue disciplines include.
 *
 * Our own minimal definitions (not kernel code): the types, the sk_buff and Qdisc fields the
 * disciplines touch, time (ktime_get_ns returns the harness's clock), the random source (every
 * kernel random call reads the next 32-bit words of a stream the harness loads, so that our
 * model can consume the very same words), lists, timers (armed, fired by the harness), and
 * netlink/module/locking macros reduced to nothing. The disciplines' own files and their
 * algorithm headers (include/net/codel*.h, pie.h, red.h) are compiled as Debian's
 * linux-source package ships them; build.py makes every other kernel header they name a
 * one-line file that includes this one.
 *
 * Semantics kept from the kernel where a decision depends on them: INET_ECN_set_ce succeeds
 * on ECT(0), ECT(1) and CE and fails on Not-ECT (include/net/inet_ecn.h, IP_ECN_set_ce);
 * reciprocal_scale and reciprocal_divide (include/linux/kernel.h, reciprocal_div.h);
 * qdisc_* queue and counter helpers (include/net/sch_generic.h); psched ticks of 64 ns
 * (include/net/pkt_sched.h, PSCHED_SHIFT 6); HZ 1000 (jiffies of 1 ms).
 */
#ifndef AQMLAB_KSHIM_H
#define AQMLAB_KSHIM_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;
typedef u8 __u8;
typedef u16 __u16;
typedef u32 __u32;
typedef u64 __u64;
typedef s8 __s8;
typedef s16 __s16;
typedef s32 __s32;
typedef s64 __s64;
typedef u16 __be16;
typedef u32 __be32;
typedef u64 __be64;
typedef u16 __le16;
typedef u32 __le32;
typedef u16 __sum16;
typedef u32 __wsum;
typedef u32 gfp_t;
typedef s64 ktime_t;
typedef u64 psched_time_t;
typedef long psched_tdiff_t;
typedef int spinlock_t;
typedef int seqcount_t;
typedef struct { int counter; } atomic_t;
typedef struct { long counter; } atomic_long_t;
typedef struct { s64 counter; } atomic64_t;
typedef struct { u64 v; } u64_stats_t;

/* The uapi headers (tc's structures and attribute numbers) come from the package as they are. */
#define __bitwise
#define __force
#define __user
#define __aligned_u64 __u64 __attribute__((aligned(8)))
#define _BITUL(x) (1UL << (x))
#define _BITULL(x) (1ULL << (x))
#define __KERNEL_DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))

/* ---- compiler and module macros ---- */
#define __read_mostly
#define __init
#define __exit
#define __rcu
#define __percpu
#define __cacheline_aligned_in_smp
#define ____cacheline_aligned_in_smp
#define ____cacheline_aligned
#define __aligned(x) __attribute__((aligned(x)))
#define __packed __attribute__((packed))
#define __always_inline inline __attribute__((always_inline))
#define noinline __attribute__((noinline))
#define __must_check
#define __maybe_unused __attribute__((unused))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define typecheck(type, x) ({ type __dummy; __typeof__(x) __dummy2; (void)(&__dummy == &__dummy2); 1; })
#define READ_ONCE(x) (x)
#define WRITE_ONCE(x, v) ((x) = (v))
#define BUILD_BUG_ON(c) ((void)sizeof(char[1 - 2 * !!(c)]))
#define BUG_ON(c) do { if (c) abort(); } while (0)
#define BUG() abort()
#define WARN_ON(c) (!!(c))
#define WARN_ON_ONCE(c) (!!(c))
#define WARN_ONCE(c, ...) (!!(c))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define FIELD_SIZEOF(t, f) (sizeof(((t *)0)->f))
#define sizeof_field(t, f) (sizeof(((t *)0)->f))
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
#define THIS_MODULE ((struct module *)0)
#define MODULE_LICENSE(x)
#define MODULE_AUTHOR(x)
#define MODULE_DESCRIPTION(x)
#define MODULE_VERSION(x)
#define MODULE_ALIAS(x)
#define MODULE_ALIAS_NET_SCH(x)
#define EXPORT_SYMBOL(x)
#define EXPORT_SYMBOL_GPL(x)
#define module_init(fn) static int (*const aqmlab_init_##fn)(void) __attribute__((unused)) = fn;
#define module_exit(fn) static void (*const aqmlab_exit_##fn)(void) __attribute__((unused)) = fn;
#define pr_info(...) ((void)0)
#define pr_warn(...) ((void)0)
#define pr_err(...) ((void)0)
#define pr_debug(...) ((void)0)
#define pr_warn_ratelimited(...) ((void)0)
#define net_warn_ratelimited(...) ((void)0)
#define printk(...) ((void)0)
#define might_sleep() ((void)0)
#define prefetch(x) ((void)(x))
#define prefetchw(x) ((void)(x))
#define barrier() ((void)0)
#define smp_mb() ((void)0)
#define smp_wmb() ((void)0)
#define smp_rmb() ((void)0)
#define fallthrough __attribute__((__fallthrough__))
#define lockdep_assert_held(x) ((void)0)
#define ASSERT_RTNL() ((void)0)
#define IS_ENABLED(x) 0

#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
#define min_t(t, a, b) ((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define max_t(t, a, b) ((t)(a) > (t)(b) ? (t)(a) : (t)(b))
#define clamp(v, lo, hi) min(max(v, lo), hi)
#define clamp_t(t, v, lo, hi) min_t(t, max_t(t, v, lo), hi)
#define clamp_val(v, lo, hi) clamp(v, lo, hi)
#define swap(a, b) do { __typeof__(a) __t = (a); (a) = (b); (b) = __t; } while (0)
#define DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))
#define roundup(x, y) ((((x) + ((y) - 1)) / (y)) * (y))
#define SZ_1K 0x00000400
#define SZ_64K 0x00010000
#define SZ_1M 0x00100000
#define SZ_4M 0x00400000
#define SZ_32M 0x02000000
#define BITS_PER_BYTE 8
#define BITS_PER_LONG 64
#define BIT(n) (1UL << (n))
#define BIT_ULL(n) (1ULL << (n))
#define U8_MAX ((u8)~0U)
#define U16_MAX ((u16)~0U)
#define U32_MAX ((u32)~0U)
#define U64_MAX ((u64)~0ULL)
#define S32_MAX ((s32)(U32_MAX >> 1))
#define S64_MAX ((s64)(U64_MAX >> 1))
#define NSEC_PER_USEC 1000L
#define NSEC_PER_MSEC 1000000L
#define NSEC_PER_SEC 1000000000L
#define USEC_PER_MSEC 1000L
#define USEC_PER_SEC 1000000L
#define MSEC_PER_SEC 1000L
#define EINVAL 22
#define ENOMEM 12
#define EOPNOTSUPP 95
#define E2BIG 7
#define ERANGE 34
#define EMSGSIZE 90
#define GFP_KERNEL 0u
#define GFP_ATOMIC 0u
#define __GFP_ZERO 0u
#define __GFP_NOWARN 0u

static inline u64 div_u64(u64 a, u32 b) { return a / b; }
static inline u64 mul_u32_u32(u32 a, u32 b) { return (u64)a * b; }
#define upper_32_bits(n) ((u32)(((u64)(n)) >> 32))
#define lower_32_bits(n) ((u32)(n))
static inline u64 div64_u64(u64 a, u64 b) { return a / b; }
static inline s64 div_s64(s64 a, s32 b) { return a / b; }
static inline u64 div_u64_rem(u64 a, u32 b, u32 *r) { *r = (u32)(a % b); return a / b; }
#define do_div(n, base) ({ u32 __rem = (u32)((n) % (base)); (n) /= (base); __rem; })
static inline int fls(unsigned int x) { return x ? 32 - __builtin_clz(x) : 0; }
static inline int fls64(u64 x) { return x ? 64 - __builtin_clzll(x) : 0; }
static inline unsigned long __fls(unsigned long x) { return 63 - __builtin_clzl(x); }
static inline int ilog2_u64(u64 x) { return fls64(x) - 1; }
#define ilog2(n) ilog2_u64((u64)(n))
static inline u32 hash_32(u32 val, unsigned int bits) { return (u32)(val * 0x61C88647u) >> (32 - bits); }
static inline u32 ror32(u32 w, unsigned int s) { return (w >> (s & 31)) | (w << ((-s) & 31)); }
static inline u32 rol32(u32 w, unsigned int s) { return (w << (s & 31)) | (w >> ((-s) & 31)); }

/* include/linux/kernel.h (math.h): a value in [0, ep_ro) from a u32, by a multiply. */
static inline u32 reciprocal_scale(u32 val, u32 ep_ro) { return (u32)(((u64)val * ep_ro) >> 32); }
/* include/linux/reciprocal_div.h: the simple reciprocal used by RED (reciprocal_value of
 * lib/math/reciprocal_div.c is not used by the disciplines compared here). */
struct reciprocal_value { u32 m; u8 sh1, sh2; };
static inline u32 reciprocal_divide(u32 a, struct reciprocal_value R)
{
	u32 t = (u32)(((u64)a * R.m) >> 32);
	return (t + ((a - t) >> R.sh1)) >> R.sh2;
}
static inline struct reciprocal_value reciprocal_value(u32 d)
{
	/* lib/math/reciprocal_div.c, reciprocal_value */
	struct reciprocal_value R;
	u64 m;
	int l;

	l = fls(d - 1);
	m = ((1ULL << 32) * ((1ULL << l) - d));
	m /= d;
	++m;
	R.m = (u32)m;
	R.sh1 = min(l, 1);
	R.sh2 = max(l - 1, 0);
	return R;
}

/* ---- the harness's clock and random stream ---- */
static u64 shim_now_ns;
static unsigned long jiffies;
#define HZ 1000
static u32 shim_random_u32(void);
static inline u64 ktime_get_ns(void) { return shim_now_ns; }
static inline ktime_t ktime_get(void) { return (ktime_t)shim_now_ns; }
static inline s64 ktime_to_ns(ktime_t t) { return t; }
static inline ktime_t ns_to_ktime(u64 ns) { return (ktime_t)ns; }
static inline ktime_t ktime_add_ns(ktime_t t, u64 ns) { return t + (ktime_t)ns; }
static inline ktime_t ktime_add_ms(ktime_t t, u64 ms) { return t + (ktime_t)(ms * NSEC_PER_MSEC); }
static inline ktime_t ktime_add_us(ktime_t t, u64 us) { return t + (ktime_t)(us * NSEC_PER_USEC); }
static inline ktime_t ktime_sub(ktime_t a, ktime_t b) { return a - b; }
static inline ktime_t ktime_add(ktime_t a, ktime_t b) { return a + b; }
static inline s64 ktime_us_delta(ktime_t a, ktime_t b) { return (a - b) / 1000; }
static inline int ktime_compare(ktime_t a, ktime_t b) { return a < b ? -1 : a > b ? 1 : 0; }
static inline bool ktime_before(ktime_t a, ktime_t b) { return a < b; }
static inline bool ktime_after(ktime_t a, ktime_t b) { return a > b; }
static inline s64 ktime_to_us(ktime_t t) { return t / 1000; }
static inline ktime_t ktime_set(s64 s, unsigned long ns) { return s * NSEC_PER_SEC + (s64)ns; }
static inline unsigned long usecs_to_jiffies(unsigned int us) { return DIV_ROUND_UP(us, USEC_PER_SEC / HZ); }
static inline unsigned long msecs_to_jiffies(unsigned int ms) { return ms; }
static inline unsigned int jiffies_to_usecs(unsigned long j) { return (unsigned int)(j * (USEC_PER_SEC / HZ)); }
static inline u64 jiffies_to_nsecs(unsigned long j) { return (u64)j * (NSEC_PER_SEC / HZ); }
static inline unsigned long nsecs_to_jiffies(u64 n) { return (unsigned long)(n / (NSEC_PER_SEC / HZ)); }
#define time_after(a, b) ((long)((b) - (a)) < 0)
#define time_before(a, b) time_after(b, a)

/* Every kernel random call takes its bytes from the harness's stream, 32 bits at a time. */
static inline u32 get_random_u32(void) { return shim_random_u32(); }
static inline u32 prandom_u32(void) { return shim_random_u32(); }
/* get_random_u16: one word of the stream, its low 16 bits. */
static inline u16 get_random_u16(void) { return (u16)shim_random_u32(); }
static inline u64 get_random_u64(void)
{
	u64 lo = shim_random_u32();
	return lo | ((u64)shim_random_u32() << 32);
}
static inline void get_random_bytes(void *buf, int n)
{
	u8 *p = buf;
	while (n > 0) {
		u32 w = shim_random_u32();
		int k = n < 4 ? n : 4;
		memcpy(p, &w, k);
		p += k;
		n -= k;
	}
}
#define prandom_bytes get_random_bytes
static inline u32 get_random_u32_below(u32 ceil) { return reciprocal_scale(get_random_u32(), ceil); }
#define prandom_u32_max get_random_u32_below

/* ---- memory ---- */
static inline void *kzalloc(size_t n, gfp_t f) { (void)f; return calloc(1, n); }
static inline void *kmalloc(size_t n, gfp_t f) { (void)f; return calloc(1, n); }
static inline void *kcalloc(size_t n, size_t m, gfp_t f) { (void)f; return calloc(n, m); }
static inline void *kvcalloc(size_t n, size_t m, gfp_t f) { (void)f; return calloc(n, m); }
static inline void *kvzalloc(size_t n, gfp_t f) { (void)f; return calloc(1, n); }
static inline void *kvmalloc(size_t n, gfp_t f) { (void)f; return calloc(1, n); }
static inline void *kvmalloc_array(size_t n, size_t m, gfp_t f) { (void)f; return calloc(n, m); }
static inline void kfree(const void *p) { free((void *)p); }
static inline void kvfree(const void *p) { free((void *)p); }
#define array_size(a, b) ((a) * (b))
#define struct_size(p, member, n) (sizeof(*(p)) + sizeof((p)->member[0]) * (n))

/* ---- locks, RCU ---- */
#define spin_lock(l) ((void)(l))
#define spin_unlock(l) ((void)(l))
#define spin_lock_bh(l) ((void)(l))
#define spin_unlock_bh(l) ((void)(l))
#define spin_lock_init(l) ((void)(l))
#define rcu_read_lock() ((void)0)
#define rcu_read_unlock() ((void)0)
#define rcu_read_lock_bh() ((void)0)
#define rcu_read_unlock_bh() ((void)0)
#define rcu_dereference(p) (p)
#define rcu_dereference_bh(p) (p)
#define rcu_dereference_protected(p, c) (p)
#define rcu_assign_pointer(p, v) ((p) = (v))
#define RCU_INIT_POINTER(p, v) ((p) = (v))
#define synchronize_rcu() ((void)0)
#define local_bh_disable() ((void)0)
#define local_bh_enable() ((void)0)

/* ---- lists (include/linux/list.h semantics) ---- */
struct list_head { struct list_head *next, *prev; };
struct hlist_node { struct hlist_node *next, **pprev; };
struct hlist_head { struct hlist_node *first; };
#define LIST_HEAD_INIT(name) { &(name), &(name) }
#define LIST_HEAD(name) struct list_head name = LIST_HEAD_INIT(name)
static inline void INIT_LIST_HEAD(struct list_head *l) { l->next = l; l->prev = l; }
static inline void __list_add(struct list_head *n, struct list_head *prev, struct list_head *next)
{
	next->prev = n;
	n->next = next;
	n->prev = prev;
	prev->next = n;
}
static inline void list_add(struct list_head *n, struct list_head *h) { __list_add(n, h, h->next); }
static inline void list_add_tail(struct list_head *n, struct list_head *h) { __list_add(n, h->prev, h); }
static inline void __list_del(struct list_head *prev, struct list_head *next)
{
	next->prev = prev;
	prev->next = next;
}
static inline void list_del(struct list_head *e) { __list_del(e->prev, e->next); e->next = e->prev = NULL; }
static inline void list_del_init(struct list_head *e) { __list_del(e->prev, e->next); INIT_LIST_HEAD(e); }
static inline void list_move(struct list_head *e, struct list_head *h) { __list_del(e->prev, e->next); list_add(e, h); }
static inline void list_move_tail(struct list_head *e, struct list_head *h) { __list_del(e->prev, e->next); list_add_tail(e, h); }
static inline int list_empty(const struct list_head *h) { return h->next == h; }
static inline int list_is_last(const struct list_head *e, const struct list_head *h) { return e->next == h; }
#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_first_entry(ptr, type, member) list_entry((ptr)->next, type, member)
#define list_first_entry_or_null(ptr, type, member) (list_empty(ptr) ? NULL : list_first_entry(ptr, type, member))
#define list_next_entry(pos, member) list_entry((pos)->member.next, __typeof__(*(pos)), member)
#define list_for_each_entry(pos, head, member) \
	for (pos = list_first_entry(head, __typeof__(*pos), member); &pos->member != (head); \
	     pos = list_next_entry(pos, member))
#define list_for_each_entry_safe(pos, n, head, member) \
	for (pos = list_first_entry(head, __typeof__(*pos), member), n = list_next_entry(pos, member); \
	     &pos->member != (head); pos = n, n = list_next_entry(n, member))
#define list_for_each(pos, head) for (pos = (head)->next; pos != (head); pos = pos->next)

/* ---- timers: armed by the discipline, fired by the harness ---- */
struct timer_list {
	unsigned long expires;
	void (*function)(struct timer_list *);
	u32 flags;
	bool pending;
};
#define timer_setup(t, fn, fl) ((t)->function = (fn), (t)->flags = (fl), (t)->pending = false, (t)->expires = 0)
static inline int mod_timer(struct timer_list *t, unsigned long expires)
{
	int was = t->pending;
	t->expires = expires;
	t->pending = true;
	return was;
}
static inline int del_timer_sync(struct timer_list *t) { int was = t->pending; t->pending = false; return was; }
static inline int del_timer(struct timer_list *t) { return del_timer_sync(t); }
#define timer_delete_sync del_timer_sync
#define from_timer(var, callback_timer, timer_fieldname) \
	container_of(callback_timer, __typeof__(*var), timer_fieldname)
#define timer_container_of(var, callback_timer, timer_fieldname) \
	container_of(callback_timer, __typeof__(*var), timer_fieldname)

/* High-resolution timers (DualPI2's pi2_timer): armed at an absolute time in ns, fired by the
 * harness; a callback returning HRTIMER_RESTART stays armed at the expiry it set. */
enum hrtimer_restart { HRTIMER_NORESTART, HRTIMER_RESTART };
enum hrtimer_mode { HRTIMER_MODE_ABS_PINNED_SOFT };
#define CLOCK_MONOTONIC 1
struct hrtimer {
	ktime_t expires;
	enum hrtimer_restart (*function)(struct hrtimer *);
	bool pending;
};
static inline void hrtimer_setup(struct hrtimer *t, enum hrtimer_restart (*fn)(struct hrtimer *),
				 int clock, enum hrtimer_mode mode)
{
	(void)clock; (void)mode;
	t->function = fn;
	t->pending = false;
	t->expires = 0;
}
static inline void hrtimer_start(struct hrtimer *t, ktime_t at, enum hrtimer_mode mode)
{
	(void)mode;
	t->expires = at;
	t->pending = true;
}
static inline void hrtimer_set_expires(struct hrtimer *t, ktime_t at) { t->expires = at; }
static inline int hrtimer_cancel(struct hrtimer *t) { int was = t->pending; t->pending = false; return was; }

/* ---- sk_buff ---- */
struct net_device_ops;
struct net_device {
	unsigned int mtu;
	unsigned short hard_header_len;
	unsigned int tx_queue_len;
	const struct net_device_ops *netdev_ops;
};
struct netdev_queue { struct net_device *dev; };
struct sock;
struct skb_shared_info { unsigned short gso_size; unsigned short gso_segs; unsigned int gso_type; };
struct sk_buff {
	struct sk_buff *next;
	struct sk_buff *prev;
	union {
		ktime_t tstamp;
		u64 skb_mstamp_ns;
	};
	char cb[48] __aligned(8);
	unsigned int len;
	unsigned int data_len;
	unsigned int truesize;
	u32 hash;
	u32 priority;
	u32 mark;
	__be16 protocol;
	u8 l4_hash : 1, sw_hash : 1;
	struct sock *sk;
	unsigned char *head, *data;
	unsigned int tail, end;
	/* The harness's: the arrival's number, its DS byte (only the ECN bits are set), the
	 * DS byte as the enqueue left it (to tell a mark at enqueue from one at dequeue). */
	u32 aqmlab_id;
	u8 aqmlab_ds;
	u8 aqmlab_ds_enqueued;
	struct skb_shared_info aqmlab_shinfo;
};
static inline struct skb_shared_info *skb_shinfo(const struct sk_buff *skb)
{
	return (struct skb_shared_info *)&skb->aqmlab_shinfo;
}
struct sk_buff_head { struct sk_buff *next, *prev; u32 qlen; spinlock_t lock; };

static inline u32 skb_get_hash(struct sk_buff *skb) { return skb->hash; }
static inline u32 skb_get_hash_perturb(const struct sk_buff *skb, const void *key)
{
	(void)key;
	return skb->hash;
}
static inline unsigned int skb_headlen(const struct sk_buff *skb) { return skb->len - skb->data_len; }
static inline bool skb_is_gso(const struct sk_buff *skb) { (void)skb; return false; }
static inline struct sk_buff *skb_peek(const struct sk_buff_head *l) { return l->next == (struct sk_buff *)l ? NULL : l->next; }
static inline void __skb_queue_head_init(struct sk_buff_head *l) { l->next = l->prev = (struct sk_buff *)l; l->qlen = 0; }
#define skb_queue_head_init __skb_queue_head_init
static inline void __skb_queue_head(struct sk_buff_head *l, struct sk_buff *skb)
{
	struct sk_buff *next = l->next;

	skb->next = next;
	skb->prev = (struct sk_buff *)l;
	next->prev = skb;
	l->next = skb;
	l->qlen++;
}
static inline struct sk_buff *__skb_dequeue(struct sk_buff_head *l)
{
	struct sk_buff *skb = skb_peek(l);

	if (skb) {
		l->next = skb->next;
		skb->next->prev = (struct sk_buff *)l;
		skb->next = skb->prev = NULL;
		l->qlen--;
	}
	return skb;
}
static inline void skb_mark_not_on_list(struct sk_buff *skb) { skb->next = NULL; }
static inline __be16 skb_protocol(const struct sk_buff *skb, bool v) { (void)v; return skb->protocol; }

/* The drops the harness reports: kfree_skb frees a packet the discipline dropped. */
static void shim_freed(struct sk_buff *skb, bool dropped);
static inline void kfree_skb(struct sk_buff *skb) { if (skb) shim_freed(skb, true); }
static inline void consume_skb(struct sk_buff *skb) { if (skb) shim_freed(skb, false); }
static inline void kfree_skb_list(struct sk_buff *skb)
{
	while (skb) {
		struct sk_buff *n = skb->next;
		kfree_skb(skb);
		skb = n;
	}
}
#define kfree_skb_reason(skb, r) kfree_skb(skb)
#define rtnl_kfree_skbs(a, b) kfree_skb_list(a)

/* include/net/inet_ecn.h: the ECN field of the DS byte. */
enum { INET_ECN_NOT_ECT = 0, INET_ECN_ECT_1 = 1, INET_ECN_ECT_0 = 2, INET_ECN_CE = 3, INET_ECN_MASK = 3 };
static inline int INET_ECN_is_ce(u8 dsfield) { return (dsfield & INET_ECN_MASK) == INET_ECN_CE; }
static inline int INET_ECN_is_not_ect(u8 dsfield) { return (dsfield & INET_ECN_MASK) == INET_ECN_NOT_ECT; }
static inline int INET_ECN_is_capable(u8 dsfield) { return dsfield & INET_ECN_ECT_0; }
/* IP_ECN_set_ce: ECT(0)/ECT(1) become CE (1), CE stays CE (1), Not-ECT is refused (0). */
static inline int INET_ECN_set_ce(struct sk_buff *skb)
{
	switch (skb->aqmlab_ds & INET_ECN_MASK) {
	case INET_ECN_NOT_ECT:
		return 0;
	case INET_ECN_CE:
		return 1;
	default:
		skb->aqmlab_ds |= INET_ECN_CE;
		return 1;
	}
}
/* IP_ECN_set_ect1 only turns ECT(0) into ECT(1). */
static inline int INET_ECN_set_ect1(struct sk_buff *skb)
{
	if ((skb->aqmlab_ds & INET_ECN_MASK) != INET_ECN_ECT_0)
		return 0;
	skb->aqmlab_ds ^= INET_ECN_MASK;
	return 1;
}
static inline int skb_get_dsfield(struct sk_buff *skb) { return skb->aqmlab_ds; }

/* ---- netlink, tc and stats: enough to compile; the harness sets parameters directly ---- */
/* Parameters reach the discipline through its own change(): the harness fills shim_attrs
 * (attribute number, value) and passes a non-NULL option; parsing hands each attribute to
 * tb[] as the kernel's nla_parse would, and nla_get_* read the value. */
/* aqmlab_data: a structure or table the harness passes (RED's tc_red_qopt and Stab), else
 * the value itself. */
struct nlattr { u16 nla_len; u16 nla_type; u64 aqmlab_value; void *aqmlab_data; };
static struct nlattr shim_attrs[64];
static int shim_nattrs;
struct netlink_ext_ack { const char *msg; };
struct nla_policy { u8 type; u8 validation_type; u16 len; union { s64 min; s64 max; u16 strict_start_type; }; };
struct nla_bitfield32 { u32 value; u32 selector; };
enum { NLA_UNSPEC, NLA_U8, NLA_U16, NLA_U32, NLA_U64, NLA_STRING, NLA_FLAG, NLA_MSECS,
       NLA_NESTED, NLA_NESTED_ARRAY, NLA_NUL_STRING, NLA_BINARY, NLA_S8, NLA_S16, NLA_S32,
       NLA_S64, NLA_BITFIELD32, NLA_REJECT };
#define NLA_POLICY_RANGE(t, lo, hi) { .type = t }
#define NLA_POLICY_MAX(t, hi) { .type = t }
#define NLA_POLICY_MIN(t, lo) { .type = t }
#define NLA_POLICY_FULL_RANGE(t, r) { .type = t }
struct netlink_range_validation { u64 min, max; };
struct netlink_range_validation_signed { s64 min, max; };
#define NL_SET_ERR_MSG(e, m) ((void)(e))
#define NL_SET_ERR_MSG_MOD(e, m) ((void)(e))
#define NL_SET_ERR_MSG_ATTR(e, a, m) ((void)(e))
static inline int nla_parse_nested_deprecated(struct nlattr **tb, int max, const struct nlattr *nla,
					      const struct nla_policy *p, struct netlink_ext_ack *e)
{
	(void)nla; (void)p; (void)e;
	memset(tb, 0, sizeof(*tb) * (size_t)(max + 1));
	for (int i = 0; i < shim_nattrs; i++)
		if (shim_attrs[i].nla_type <= max)
			tb[shim_attrs[i].nla_type] = &shim_attrs[i];
	return 0;
}
#define nla_parse_nested(tb, max, nla, p, e) nla_parse_nested_deprecated(tb, max, nla, p, e)
static inline u32 nla_get_u32(const struct nlattr *n) { return (u32)n->aqmlab_value; }
static inline u16 nla_get_u16(const struct nlattr *n) { return (u16)n->aqmlab_value; }
static inline u8 nla_get_u8(const struct nlattr *n) { return (u8)n->aqmlab_value; }
static inline u64 nla_get_u64(const struct nlattr *n) { return n->aqmlab_value; }
static inline s32 nla_get_s32(const struct nlattr *n) { return (s32)n->aqmlab_value; }
static inline bool nla_get_flag(const struct nlattr *n) { return n != NULL; }
static inline int nla_put_u32(struct sk_buff *s, int t, u32 v) { (void)s; (void)t; (void)v; return 0; }
static inline int nla_put_u16(struct sk_buff *s, int t, u16 v) { (void)s; (void)t; (void)v; return 0; }
static inline int nla_put_u8(struct sk_buff *s, int t, u8 v) { (void)s; (void)t; (void)v; return 0; }
static inline int nla_put_s32(struct sk_buff *s, int t, s32 v) { (void)s; (void)t; (void)v; return 0; }
static inline int nla_put_flag(struct sk_buff *s, int t) { (void)s; (void)t; return 0; }
static inline int nla_put_u64_64bit(struct sk_buff *s, int t, u64 v, int pad) { (void)s; (void)t; (void)v; (void)pad; return 0; }
static inline int nla_put(struct sk_buff *s, int t, int l, const void *d) { (void)s; (void)t; (void)l; (void)d; return 0; }
static inline struct nlattr *nla_nest_start_noflag(struct sk_buff *s, int t) { (void)s; (void)t; return NULL; }
#define nla_nest_start(s, t) nla_nest_start_noflag(s, t)
static inline int nla_nest_end(struct sk_buff *s, struct nlattr *n) { (void)s; (void)n; return 0; }
static inline void nla_nest_cancel(struct sk_buff *s, struct nlattr *n) { (void)s; (void)n; }
static inline void *nla_data(const struct nlattr *n) { return n->aqmlab_data ? n->aqmlab_data : (void *)&n->aqmlab_value; }
static inline int nla_len(const struct nlattr *n) { (void)n; return sizeof(u64); }

struct gnet_stats_basic_sync { u64_stats_t bytes; u64_stats_t packets; };
struct gnet_stats_queue { u32 qlen; u32 backlog; u32 drops; u32 requeues; u32 overlimits; };
struct gnet_dump { struct sk_buff *skb; };
static inline int gnet_stats_copy_app(struct gnet_dump *d, void *st, int len) { (void)d; (void)st; (void)len; return 0; }
static inline int gnet_stats_copy_queue(struct gnet_dump *d, void *c, struct gnet_stats_queue *q, u32 qlen)
{
	(void)d; (void)c; (void)q; (void)qlen;
	return 0;
}
static inline void u64_stats_add(u64_stats_t *p, unsigned long v) { p->v += v; }
static inline void u64_stats_inc(u64_stats_t *p) { p->v++; }
static inline u64 u64_stats_read(const u64_stats_t *p) { return p->v; }

#define TCA_OPTIONS 2 /* uapi linux/rtnetlink.h */
struct tcmsg { unsigned char tcm_family; int tcm_ifindex; u32 tcm_handle; u32 tcm_parent; u32 tcm_info; };
struct tcf_proto;
struct tcf_block;
struct tcf_result { unsigned long class; u32 classid; };
struct Qdisc;
static inline int tcf_block_get(struct tcf_block **b, struct tcf_proto __rcu **p, struct Qdisc *q,
				struct netlink_ext_ack *e)
{
	(void)p; (void)q; (void)e;
	*b = NULL;
	return 0;
}
static inline void tcf_block_put(struct tcf_block *b) { (void)b; }
#define tcf_classify_qdisc(skb, tp, res, compat) tcf_classify(skb, NULL, tp, res, compat)
static inline int tcf_classify(struct sk_buff *skb, const struct tcf_block *b, const struct tcf_proto *tp,
			       struct tcf_result *res, bool compat)
{
	(void)skb; (void)b; (void)tp; (void)res; (void)compat;
	return -1;
}

/* ---- Qdisc (include/net/sch_generic.h) ---- */
#define NET_XMIT_SUCCESS 0x00
#define NET_XMIT_DROP 0x01
#define NET_XMIT_CN 0x02
#define NET_XMIT_MASK 0x0f
#define __NET_XMIT_STOLEN 0x00010000
#define __NET_XMIT_BYPASS 0x00020000
#define TCQ_F_CAN_BYPASS 4
#define TCQ_F_NOLOCK 0x100
#define PSCHED_SHIFT 6
#define PSCHED_TICKS2NS(x) ((s64)(x) << PSCHED_SHIFT)
#define PSCHED_NS2TICKS(x) ((x) >> PSCHED_SHIFT)
#define PSCHED_TICKS_PER_SEC PSCHED_NS2TICKS(NSEC_PER_SEC)
#define PSCHED_PASTPERFECT 0
static inline psched_time_t psched_get_time(void) { return PSCHED_NS2TICKS(ktime_get_ns()); }

struct qdisc_skb_head { struct sk_buff *head; struct sk_buff *tail; u32 qlen; spinlock_t lock; };
#define QDISC_CB_PRIV_LEN 20
struct qdisc_skb_cb {
	struct {
		unsigned int pkt_len;
		u16 slave_dev_queue_mapping;
		u16 tc_classid;
	};
	unsigned char data[QDISC_CB_PRIV_LEN];
};
struct module;
struct qdisc_walker;
struct Qdisc_class_ops;
struct Qdisc_ops {
	struct Qdisc_ops *next;
	const struct Qdisc_class_ops *cl_ops;
	char id[16];
	int priv_size;
	unsigned int static_flags;
	int (*enqueue)(struct sk_buff *skb, struct Qdisc *sch, struct sk_buff **to_free);
	struct sk_buff *(*dequeue)(struct Qdisc *);
	struct sk_buff *(*peek)(struct Qdisc *);
	int (*init)(struct Qdisc *sch, struct nlattr *arg, struct netlink_ext_ack *extack);
	void (*reset)(struct Qdisc *);
	void (*destroy)(struct Qdisc *);
	int (*change)(struct Qdisc *sch, struct nlattr *arg, struct netlink_ext_ack *extack);
	void (*attach)(struct Qdisc *sch);
	int (*change_tx_queue_len)(struct Qdisc *, unsigned int);
	void (*change_real_num_tx)(struct Qdisc *sch, unsigned int new_real_tx);
	int (*dump)(struct Qdisc *, struct sk_buff *);
	int (*dump_stats)(struct Qdisc *, struct gnet_dump *);
	void (*ingress_block_set)(struct Qdisc *sch, u32 block_index);
	void (*egress_block_set)(struct Qdisc *sch, u32 block_index);
	u32 (*ingress_block_get)(struct Qdisc *sch);
	u32 (*egress_block_get)(struct Qdisc *sch);
	struct module *owner;
};
struct Qdisc_class_ops {
	unsigned int flags;
	struct netdev_queue *(*select_queue)(struct Qdisc *, struct tcmsg *);
	int (*graft)(struct Qdisc *, unsigned long cl, struct Qdisc *, struct Qdisc **, struct netlink_ext_ack *extack);
	struct Qdisc *(*leaf)(struct Qdisc *, unsigned long cl);
	void (*qlen_notify)(struct Qdisc *, unsigned long);
	unsigned long (*find)(struct Qdisc *, u32 classid);
	int (*change)(struct Qdisc *, u32, u32, struct nlattr **, unsigned long *, struct netlink_ext_ack *);
	int (*delete)(struct Qdisc *, unsigned long, struct netlink_ext_ack *);
	void (*walk)(struct Qdisc *, struct qdisc_walker *arg);
	struct tcf_block *(*tcf_block)(struct Qdisc *sch, unsigned long arg, struct netlink_ext_ack *extack);
	unsigned long (*bind_tcf)(struct Qdisc *, unsigned long, u32 classid);
	void (*unbind_tcf)(struct Qdisc *, unsigned long);
	int (*dump)(struct Qdisc *, unsigned long, struct sk_buff *skb, struct tcmsg *);
	int (*dump_stats)(struct Qdisc *, unsigned long, struct gnet_dump *);
};
struct qdisc_walker {
	int stop;
	int skip;
	int count;
	int (*fn)(struct Qdisc *, unsigned long cl, struct qdisc_walker *);
};
static inline bool tc_qdisc_stats_dump(struct Qdisc *sch, unsigned long cl, struct qdisc_walker *arg)
{
	(void)sch; (void)cl; (void)arg;
	return true;
}

struct Qdisc {
	int (*enqueue)(struct sk_buff *skb, struct Qdisc *sch, struct sk_buff **to_free);
	struct sk_buff *(*dequeue)(struct Qdisc *sch);
	unsigned int flags;
	u32 limit;
	const struct Qdisc_ops *ops;
	u32 handle;
	u32 parent;
	struct netdev_queue *dev_queue;
	struct gnet_stats_basic_sync bstats;
	struct gnet_stats_queue qstats;
	struct qdisc_skb_head q;
	struct sk_buff_head gso_skb;
	spinlock_t busylock;
	spinlock_t seqlock;
	long privdata[] __aligned(64);
};
static inline void *qdisc_priv(struct Qdisc *q) { return &q->privdata; }
static inline struct Qdisc *qdisc_from_priv(void *priv) { return container_of(priv, struct Qdisc, privdata); }
static inline struct net_device *qdisc_dev(const struct Qdisc *q) { return q->dev_queue->dev; }
static inline unsigned int psched_mtu(const struct net_device *dev) { return dev->mtu + dev->hard_header_len; }
static inline struct qdisc_skb_cb *qdisc_skb_cb(const struct sk_buff *skb) { return (struct qdisc_skb_cb *)skb->cb; }
static inline void qdisc_cb_private_validate(const struct sk_buff *skb, int sz) { (void)skb; (void)sz; }
static inline unsigned int qdisc_pkt_len(const struct sk_buff *skb) { return qdisc_skb_cb(skb)->pkt_len; }
static inline int qdisc_qlen(const struct Qdisc *q) { return q->q.qlen; }
static inline int qdisc_qlen_sum(const struct Qdisc *q) { return q->q.qlen; }
static inline spinlock_t *qdisc_lock(struct Qdisc *q) { return &q->q.lock; }
static inline struct Qdisc *qdisc_root_sleeping(struct Qdisc *q) { return q; }
static inline spinlock_t *qdisc_root_sleeping_lock(struct Qdisc *q) { return &q->q.lock; }
static inline spinlock_t *qdisc_root_lock(struct Qdisc *q) { return &q->q.lock; }
static inline struct Qdisc *qdisc_root(struct Qdisc *q) { return q; }
static inline void sch_tree_lock(struct Qdisc *q) { (void)q; }
static inline void sch_tree_unlock(struct Qdisc *q) { (void)q; }
static inline void qdisc_tree_reduce_backlog(struct Qdisc *q, int n, int len) { (void)q; (void)n; (void)len; }
static inline void qdisc_qstats_backlog_dec(struct Qdisc *sch, const struct sk_buff *skb) { sch->qstats.backlog -= qdisc_pkt_len(skb); }
static inline void qdisc_qstats_backlog_inc(struct Qdisc *sch, const struct sk_buff *skb) { sch->qstats.backlog += qdisc_pkt_len(skb); }
static inline void qdisc_qstats_drop(struct Qdisc *sch) { sch->qstats.drops++; }
static inline void qdisc_qstats_cpu_drop(struct Qdisc *sch) { sch->qstats.drops++; }
static inline void qdisc_qstats_overlimit(struct Qdisc *sch) { sch->qstats.overlimits++; }
static inline void qdisc_qstats_qlen_backlog(struct Qdisc *sch, u32 *qlen, u32 *backlog) { *qlen = sch->q.qlen; *backlog = sch->qstats.backlog; }
static inline void bstats_update(struct gnet_stats_basic_sync *b, const struct sk_buff *skb)
{
	u64_stats_add(&b->bytes, qdisc_pkt_len(skb));
	u64_stats_inc(&b->packets);
}
static inline void qdisc_bstats_update(struct Qdisc *sch, const struct sk_buff *skb) { bstats_update(&sch->bstats, skb); }
static inline void __qdisc_enqueue_tail(struct sk_buff *skb, struct qdisc_skb_head *qh)
{
	struct sk_buff *last = qh->tail;

	if (last) {
		skb->next = NULL;
		last->next = skb;
		qh->tail = skb;
	} else {
		qh->tail = skb;
		qh->head = skb;
	}
	qh->qlen++;
}
static inline int qdisc_enqueue_tail(struct sk_buff *skb, struct Qdisc *sch)
{
	__qdisc_enqueue_tail(skb, &sch->q);
	qdisc_qstats_backlog_inc(sch, skb);
	return NET_XMIT_SUCCESS;
}
static inline struct sk_buff *__qdisc_dequeue_head(struct qdisc_skb_head *qh)
{
	struct sk_buff *skb = qh->head;

	if (likely(skb != NULL)) {
		qh->head = skb->next;
		qh->qlen--;
		if (qh->head == NULL)
			qh->tail = NULL;
		skb->next = NULL;
	}
	return skb;
}
static inline struct sk_buff *qdisc_dequeue_head(struct Qdisc *sch)
{
	struct sk_buff *skb = __qdisc_dequeue_head(&sch->q);

	if (likely(skb != NULL)) {
		qdisc_qstats_backlog_dec(sch, skb);
		qdisc_bstats_update(sch, skb);
	}
	return skb;
}
static inline struct sk_buff *qdisc_peek_head(struct Qdisc *sch) { return sch->q.head; }
static inline void __qdisc_drop(struct sk_buff *skb, struct sk_buff **to_free)
{
	skb->next = *to_free;
	*to_free = skb;
}
static inline int qdisc_drop(struct sk_buff *skb, struct Qdisc *sch, struct sk_buff **to_free)
{
	__qdisc_drop(skb, to_free);
	qdisc_qstats_drop(sch);
	return NET_XMIT_DROP;
}
#define qdisc_drop_reason(skb, sch, to_free, r) qdisc_drop(skb, sch, to_free)
/* The reasons a discipline names (include/net/dropreason-core.h); the shim ignores them. */
enum skb_drop_reason {
	SKB_DROP_REASON_QDISC_OVERLIMIT = 1,
	SKB_DROP_REASON_QDISC_CONGESTED,
	SKB_DROP_REASON_DUALPI2_STEP_DROP,
};
static inline unsigned int __qdisc_queue_drop_head(struct Qdisc *sch, struct qdisc_skb_head *qh,
						   struct sk_buff **to_free)
{
	struct sk_buff *skb = __qdisc_dequeue_head(qh);

	if (likely(skb != NULL)) {
		unsigned int len = qdisc_pkt_len(skb);

		qdisc_qstats_backlog_dec(sch, skb);
		__qdisc_drop(skb, to_free);
		return len;
	}
	return 0;
}
static inline void rtnl_qdisc_drop(struct sk_buff *skb, struct Qdisc *sch)
{
	qdisc_qstats_drop(sch);
	kfree_skb(skb);
}
static inline struct sk_buff *qdisc_dequeue_internal(struct Qdisc *sch, bool direct)
{
	(void)direct;
	return __qdisc_dequeue_head(&sch->q);
}
static inline void __qdisc_reset_queue(struct qdisc_skb_head *qh)
{
	kfree_skb_list(qh->head);
	qh->head = qh->tail = NULL;
	qh->qlen = 0;
}
static inline void qdisc_reset_queue(struct Qdisc *sch)
{
	__qdisc_reset_queue(&sch->q);
	sch->qstats.backlog = 0;
}
static inline struct sk_buff *qdisc_peek_dequeued(struct Qdisc *sch) { (void)sch; return NULL; }
static inline int register_qdisc(struct Qdisc_ops *q) { (void)q; return 0; }
static inline void unregister_qdisc(struct Qdisc_ops *q) { (void)q; }
static inline void qdisc_class_hash_grow(struct Qdisc *q, void *h) { (void)q; (void)h; }
/* A child FIFO (DualPI2's L queue: qdisc_create_dflt with pfifo_qdisc_ops): a bare Qdisc
 * whose queue, counters and limit (the device's tx_queue_len) the parent uses directly. */
static struct Qdisc_ops pfifo_qdisc_ops;
static inline struct Qdisc *qdisc_create_dflt(struct netdev_queue *dq, const struct Qdisc_ops *ops,
					      u32 handle, struct netlink_ext_ack *e)
{
	struct Qdisc *q = calloc(1, sizeof(struct Qdisc));

	(void)e;
	q->ops = ops;
	q->handle = handle;
	q->dev_queue = dq;
	q->limit = dq->dev->tx_queue_len;
	return q;
}
/* A builtin qdisc (noop_qdisc) is never freed (TCQ_F_BUILTIN, sch_generic.c qdisc_put). */
#define TCQ_F_BUILTIN 1
static inline void qdisc_put(struct Qdisc *q) { if (!(q->flags & TCQ_F_BUILTIN)) free(q); }

#include <linux/pkt_sched.h>
#include <linux/pkt_cls.h>
#include "kshim_net.h"
#include "kshim_child.h"

#endif
