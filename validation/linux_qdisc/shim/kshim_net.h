/* The network-header part of our shim, for CAKE (net/sched/sch_cake.c): IP/IPv6/TCP/UDP
 * header layouts (include/uapi/linux/ip.h, ipv6.h, tcp.h, udp.h, on a little-endian host),
 * the flow dissector's keys (include/net/flow_dissector.h), GSO fields and the qdisc
 * watchdog. The harness's packets carry no headers: skb_header_pointer and pskb_may_pull
 * fail, so CAKE's header parsing (DSCP, ACK filter, NAT) finds nothing; the flow hash comes
 * from skb->hash (l4_hash set), as cake_hash uses it. Included by kshim.h. */
#ifndef AQMLAB_KSHIM_NET_H
#define AQMLAB_KSHIM_NET_H

#define htons(x) ((__be16)__builtin_bswap16((u16)(x)))
#define ntohs(x) ((u16)__builtin_bswap16((u16)(x)))
#define htonl(x) ((__be32)__builtin_bswap32((u32)(x)))
#define ntohl(x) ((u32)__builtin_bswap32((u32)(x)))
#define cpu_to_be16 htons
#define be16_to_cpu ntohs
#define cpu_to_be32 htonl
#define be32_to_cpu ntohl
#define IPPROTO_IP 0
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17
#define IPPROTO_IPV6 41
#define ETH_P_IP 0x0800
#define ETH_P_ARP 0x0806
#define ETH_P_IPV6 0x86DD
#define KTIME_MAX ((s64)~((u64)1 << 63))
#define TCA_STATS_APP 4
#define IS_ERR_OR_NULL(p) ((p) == NULL || (unsigned long)(p) >= (unsigned long)-4095)
#define IS_ERR(p) ((unsigned long)(p) >= (unsigned long)-4095)
#define PTR_ERR(p) ((long)(p))

struct iphdr {
	u8 ihl : 4, version : 4;
	u8 tos;
	__be16 tot_len;
	__be16 id;
	__be16 frag_off;
	u8 ttl;
	u8 protocol;
	__sum16 check;
	__be32 saddr;
	__be32 daddr;
};
struct in6_addr { union { u8 u6_addr8[16]; __be32 u6_addr32[4]; } in6_u; };
#define s6_addr in6_u.u6_addr8
#define s6_addr32 in6_u.u6_addr32
struct ipv6hdr {
	u8 priority : 4, version : 4;
	u8 flow_lbl[3];
	__be16 payload_len;
	u8 nexthdr;
	u8 hop_limit;
	struct in6_addr saddr;
	struct in6_addr daddr;
};
struct tcphdr {
	__be16 source;
	__be16 dest;
	__be32 seq;
	__be32 ack_seq;
	u16 res1 : 4, doff : 4, fin : 1, syn : 1, rst : 1, psh : 1, ack : 1, urg : 1, ece : 1, cwr : 1;
	__be16 window;
	__sum16 check;
	__be16 urg_ptr;
};
struct udphdr { __be16 source; __be16 dest; __be16 len; __sum16 check; };
struct tcp_sack_block_wire { __be32 start_seq; __be32 end_seq; };
union tcp_word_hdr { struct tcphdr hdr; __be32 words[5]; };
#define tcp_flag_word(tp) (((union tcp_word_hdr *)(tp))->words[3])
/* include/net/tcp.h's flags in the header's fourth word, big-endian (byte-swapped here). */
#define TCP_FLAG_CWR __builtin_bswap32(0x00800000)
#define TCP_FLAG_ECE __builtin_bswap32(0x00400000)
#define TCP_FLAG_URG __builtin_bswap32(0x00200000)
#define TCP_FLAG_ACK __builtin_bswap32(0x00100000)
#define TCP_FLAG_PSH __builtin_bswap32(0x00080000)
#define TCP_FLAG_RST __builtin_bswap32(0x00040000)
#define TCP_FLAG_SYN __builtin_bswap32(0x00020000)
#define TCP_FLAG_FIN __builtin_bswap32(0x00010000)
#define TCPOPT_NOP 1
#define TCPOPT_EOL 0
#define TCPOPT_MSS 2
#define TCPOPT_WINDOW 3
#define TCPOPT_SACK_PERM 4
#define TCPOPT_SACK 5
#define TCPOPT_TIMESTAMP 8
#define TCPOPT_MD5SIG 19
#define TCPOPT_FASTOPEN 34
#define TCPOPT_EXP 254
#define TCPOLEN_TIMESTAMP 10
#define TCPOLEN_SACK_BASE 2

/* A harness that sets shim_ip_header gives every packet a readable, writable IPv4 header
 * whose DS byte is the packet's (DualPI2 reads the ECN field there, dualpi2_read_ect);
 * otherwise headers cannot be pulled (CAKE's parsing finds nothing). */
static bool shim_ip_header;
static struct iphdr shim_iph;
static inline int skb_network_offset(const struct sk_buff *skb) { (void)skb; return 0; }
static inline unsigned char *skb_network_header(const struct sk_buff *skb) { (void)skb; return NULL; }
static inline unsigned char *skb_transport_header(const struct sk_buff *skb) { (void)skb; return NULL; }
static inline int skb_transport_offset(const struct sk_buff *skb) { (void)skb; return 0; }
static inline struct iphdr *ip_hdr(const struct sk_buff *skb)
{
	if (!shim_ip_header)
		return NULL;
	shim_iph.tos = skb->aqmlab_ds;
	return &shim_iph;
}
static inline struct ipv6hdr *ipv6_hdr(const struct sk_buff *skb) { (void)skb; return NULL; }
static inline struct tcphdr *tcp_hdr(const struct sk_buff *skb) { (void)skb; return NULL; }
static inline void *skb_header_pointer(const struct sk_buff *skb, int offset, int len, void *buffer)
{
	(void)skb; (void)offset; (void)len; (void)buffer;
	return NULL;
}
static inline bool pskb_may_pull(struct sk_buff *skb, unsigned int len) { (void)skb; (void)len; return shim_ip_header; }
static inline int skb_try_make_writable(struct sk_buff *skb, unsigned int len) { (void)skb; (void)len; return shim_ip_header ? 0 : 1; }
static inline u8 ipv4_get_dsfield(const struct iphdr *iph) { return iph ? iph->tos : 0; }
static inline void ipv4_change_dsfield(struct iphdr *iph, u8 mask, u8 value) { (void)iph; (void)mask; (void)value; }
static inline void ipv6_change_dsfield(struct ipv6hdr *h, u8 mask, u8 value) { (void)h; (void)mask; (void)value; }
static inline u8 ipv6_get_dsfield(const struct ipv6hdr *h) { (void)h; return 0; }
static inline unsigned char *skb_mac_header(const struct sk_buff *skb) { (void)skb; return NULL; }
static inline unsigned int __tcp_hdrlen(const struct tcphdr *th) { return th->doff * 4; }
static inline bool tcp_skb_pure_ack(const struct sk_buff *skb) { (void)skb; return false; }

/* include/net/flow_dissector.h */
enum flow_dissector_key_id {
	FLOW_DISSECTOR_KEY_CONTROL, FLOW_DISSECTOR_KEY_BASIC, FLOW_DISSECTOR_KEY_IPV4_ADDRS,
	FLOW_DISSECTOR_KEY_IPV6_ADDRS,
};
#define FLOW_DISSECTOR_F_STOP_AT_FLOW_LABEL BIT(2)
struct flow_dissector_key_control { u16 thoff; u16 addr_type; u32 flags; };
struct flow_dissector_key_basic { __be16 n_proto; u8 ip_proto; u8 padding; };
struct flow_dissector_key_tags { u32 flow_label; };
struct flow_dissector_key_keyid { __be32 keyid; };
struct flow_dissector_key_ports { union { __be32 ports; struct { __be16 src; __be16 dst; }; }; };
struct flow_dissector_key_ipv4_addrs { __be32 src; __be32 dst; };
struct flow_dissector_key_ipv6_addrs { struct in6_addr src; struct in6_addr dst; };
struct flow_dissector_key_addrs {
	union {
		struct flow_dissector_key_ipv4_addrs v4addrs;
		struct flow_dissector_key_ipv6_addrs v6addrs;
	};
};
struct flow_keys {
	struct flow_dissector_key_control control;
	struct flow_dissector_key_basic basic;
	struct flow_dissector_key_tags tags;
	struct flow_dissector_key_keyid keyid;
	struct flow_dissector_key_ports ports;
	struct flow_dissector_key_addrs addrs;
};
static inline bool skb_flow_dissect_flow_keys(const struct sk_buff *skb, struct flow_keys *k, unsigned int fl)
{
	(void)skb; (void)fl;
	memset(k, 0, sizeof(*k));
	k->control.addr_type = FLOW_DISSECTOR_KEY_IPV4_ADDRS;
	return true;
}
static inline u32 flow_hash_from_keys(struct flow_keys *k) { (void)k; return 0; }

/* GSO: the harness's packets are never GSO. */
typedef u64 netdev_features_t;
#define NETIF_F_GSO_MASK 0
#define NETIF_F_GSO_SHIFT 16
#define SKB_GSO_TCPV4 1
#define SKB_GSO_DODGY 2
#define SKB_GSO_TCPV6 16
static inline netdev_features_t netif_skb_features(struct sk_buff *skb) { (void)skb; return 0; }
static inline struct sk_buff *skb_gso_segment(struct sk_buff *skb, netdev_features_t f) { (void)skb; (void)f; return NULL; }
#define skb_list_walk_safe(first, skb, next_skb)                                      \
	for ((skb) = (first), (next_skb) = (skb) ? (skb)->next : NULL; (skb);           \
	     (skb) = (next_skb), (next_skb) = (skb) ? (skb)->next : NULL)

/* The qdisc watchdog: armed by the discipline, the harness only reports it. */
struct qdisc_watchdog { u64 last_expires; struct Qdisc *qdisc; bool armed; };
static inline void qdisc_watchdog_init(struct qdisc_watchdog *wd, struct Qdisc *q)
{
	wd->qdisc = q;
	wd->armed = false;
	wd->last_expires = 0;
}
static inline void qdisc_watchdog_schedule_range_ns(struct qdisc_watchdog *wd, u64 expires, u64 delta)
{
	(void)delta;
	wd->armed = true;
	wd->last_expires = expires;
}
static inline void qdisc_watchdog_schedule_ns(struct qdisc_watchdog *wd, u64 expires)
{
	qdisc_watchdog_schedule_range_ns(wd, expires, 0);
}
static inline void qdisc_watchdog_cancel(struct qdisc_watchdog *wd) { wd->armed = false; }

#endif
