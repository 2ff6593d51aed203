//! How Linux sizes the bursts of new data a TCP sender hands to the device, for BBR (read in
//! Linux 6.x: `net/core/sock.c` `sk_setup_caps`, `net/ipv4/tcp_output.c` `tcp_write_xmit`,
//! `tcp_tso_autosize`, `tcp_tso_segs`, `tcp_cwnd_test`, `tcp_tso_should_defer`).
//!
//! Since Linux 5.17 ("tcp: switch to GSO being always on") every TCP socket can send GSO
//! packets: `sk_setup_caps` adds `NETIF_F_GSO` for TCP whatever the device offers, so with
//! the device's TSO and GSO off — the testbed's veths — TCP still builds skbs of several
//! segments, which the stack cuts into frames in software just before the device: they leave
//! back to back, and the pacer spaces whole skbs (`tcp_update_skb_after_send` advances the
//! departure time by the skb's length). An skb of new data holds `min(cwnd quota, max_segs)`
//! segments (`tcp_mss_split_point`):
//!
//! - `max_segs` (`tcp_tso_segs` → `tcp_tso_autosize`): about 1 ms of data at the pacing rate
//!   (`sk_pacing_rate >> sk_pacing_shift`), plus `gso_max_size >> (min_rtt_us >> 9)` on short
//!   paths (`tcp_tso_rtt_log` 9: nothing above 16 ms), at most `gso_max_size`, in segments, at
//!   least the congestion control's minimum (`bbr_min_tso_segs`: 1 below 1.2 Mbit/s, else 2);
//! - the quota (`tcp_cwnd_test`): `min(cwnd/2, cwnd − in flight)`, "at least 2 GSO packets in
//!   flight";
//! - deferral (`tcp_tso_should_defer`): when fewer than `max_segs` segments fit in cwnd, the
//!   skb waits for an ACK unless the sender is in recovery, was idle for more than 1 ms past
//!   its departure time, a third of cwnd fits, or the oldest segment outstanding left less
//!   than half an SRTT ago. Never for a tail loss probe (`push_one`).
//!
//! Retransmissions are sent a segment at a time here (Linux resends the skbs as they were
//! cut, `tcp_retransmit_skb`), and only BBR is sized this way (the other senders' results are
//! kept as they were; Linux does this for every congestion control).

use super::bbr::{GSO_BYTES_CAP, PACING_SHIFT};
use crate::units::Time;

/// `sysctl_tcp_tso_rtt_log`: paths of min RTT below 2^9 µs · 32 get bigger bursts.
pub const TSO_RTT_LOG: u32 = 9;
/// `sysctl_tcp_tso_win_divisor`: deferral stops once a third of cwnd fits.
pub const TSO_WIN_DIVISOR: u64 = 3;
/// Deferral only within 1 ms of the pacer's departure time (`NSEC_PER_MSEC`).
pub const DEFER_IDLE_NS: Time = 1_000_000;

/// `tcp_tso_autosize`: segments per skb at pacing rate `pacing_rate` (bytes/s) and min RTT
/// `min_rtt_us` (`u64::MAX`: none), at least `min_tso_segs`.
pub fn tso_autosize(pacing_rate: u64, min_rtt_us: u64, mss: u64, min_tso_segs: u32) -> u32 {
    let mut bytes = pacing_rate >> PACING_SHIFT;
    let r = min_rtt_us >> TSO_RTT_LOG;
    if r < u32::BITS as u64 {
        bytes = bytes.saturating_add(GSO_BYTES_CAP >> r);
    }
    let segs = bytes.min(GSO_BYTES_CAP) / mss;
    (segs.min(u32::MAX as u64) as u32).max(min_tso_segs)
}

/// `tcp_cwnd_test`: segments cwnd lets one skb take (0: none).
pub fn cwnd_quota(cwnd: u32, in_flight: u32) -> u32 {
    if in_flight >= cwnd {
        return 0;
    }
    (cwnd / 2).max(1).min(cwnd - in_flight)
}

/// What `tcp_tso_should_defer` reads (segments, bytes, ns).
#[derive(Clone, Copy, Debug)]
pub struct DeferCheck {
    /// `icsk_ca_state >= TCP_CA_Recovery`.
    pub recovering: bool,
    pub now: Time,
    /// The pacer's departure time (`tcp_wstamp_ns`).
    pub wstamp: Time,
    pub cwnd: u32,
    pub in_flight: u32,
    pub mss: u64,
    pub max_segs: u32,
    /// The receiver's window left from the skb's start (`send_win`) and the window itself
    /// (`snd_wnd`).
    pub send_win: u64,
    pub snd_wnd: u64,
    /// Bytes of the unsent skb (`skb->len`), whether more data follows it in the queue, and
    /// whether it carries the FIN.
    pub skb_len: u64,
    pub more_queued: bool,
    pub fin: bool,
    /// Last send time of the oldest segment outstanding (`tcp_rtx_queue_head(sk)->tstamp`;
    /// None: nothing outstanding), and `srtt_us` (8 × SRTT in µs).
    pub head_sent: Option<Time>,
    pub srtt_us8: u64,
}

/// `tcp_tso_should_defer` for an skb of more than one segment: true to wait for an ACK.
pub fn should_defer(c: &DeferCheck) -> bool {
    if c.recovering || c.now > c.wstamp.saturating_add(DEFER_IDLE_NS) {
        return false;
    }
    let cong_win = c.cwnd.saturating_sub(c.in_flight) as u64 * c.mss;
    let limit = c.send_win.min(cong_win);
    if limit >= c.max_segs as u64 * c.mss || (c.more_queued && limit >= c.skb_len) {
        return false;
    }
    let chunk = c.snd_wnd.min(c.cwnd as u64 * c.mss) / TSO_WIN_DIVISOR;
    if limit >= chunk {
        return false;
    }
    let Some(head) = c.head_sent else {
        return false;
    };
    // "If next ACK is likely to come too late (half srtt), do not defer."
    if c.now.saturating_sub(head) < 1000 * (c.srtt_us8 >> 4) {
        return false;
    }
    let limited = if cong_win < c.send_win {
        cong_win <= c.skb_len
    } else {
        c.send_win <= c.skb_len
    };
    // "If this packet won't get more data, do not wait": the skb that carries the FIN.
    limited || !c.fin
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: at 10 Mb/s (1.25 MB/s, 1220 B per ms) less than a segment of 1448 B, so the
    /// minimum decides — 2 at or above 150 kB/s (`bbr_min_tso_segs`), 1 below; at 100 Mb/s
    /// 12 207 B per ms, 8 segments; a 1 ms path adds 65 215 >> 1 = 32 607 B (22 segments
    /// more), a 40 ms one nothing (40 000 >> 9 = 78 ≥ 32); the cap is 65 215 B, 45 segments.
    #[test]
    fn autosize_by_hand() {
        assert_eq!(tso_autosize(1_250_000, 40_000, 1448, 2), 2);
        assert_eq!(tso_autosize(100_000, 40_000, 1448, 1), 1);
        assert_eq!(tso_autosize(12_500_000, 40_000, 1448, 2), 8);
        assert_eq!(
            tso_autosize(12_500_000, 1000, 1448, 2),
            (12_207 + 32_607) / 1448
        );
        assert_eq!(tso_autosize(u64::MAX, u64::MAX, 1448, 2), 45);
        assert_eq!(tso_autosize(1_250_000, u64::MAX, 1448, 2), 2, "no RTT yet");
    }

    #[test]
    fn quota_is_half_cwnd_at_most() {
        assert_eq!(cwnd_quota(10, 10), 0);
        assert_eq!(cwnd_quota(10, 0), 5);
        assert_eq!(cwnd_quota(10, 8), 2);
        assert_eq!(cwnd_quota(1, 0), 1);
    }

    /// One segment of room in a cwnd of 10 with max_segs 2, the oldest segment sent 30 ms ago
    /// (SRTT 40 ms): defer. Each condition that sends at once, one at a time.
    #[test]
    fn deferral_conditions() {
        let ms = 1_000_000;
        let base = DeferCheck {
            recovering: false,
            now: 100 * ms,
            wstamp: 100 * ms,
            cwnd: 10,
            in_flight: 9,
            mss: 1448,
            max_segs: 2,
            send_win: 1 << 24,
            snd_wnd: 1 << 24,
            skb_len: 40 * 1448,
            more_queued: true,
            fin: false,
            head_sent: Some(70 * ms),
            srtt_us8: 8 * 40_000,
        };
        assert!(should_defer(&base));
        assert!(!should_defer(&DeferCheck {
            recovering: true,
            ..base
        }));
        // Idle: the departure time more than 1 ms past.
        assert!(!should_defer(&DeferCheck {
            wstamp: 98 * ms,
            ..base
        }));
        assert!(should_defer(&DeferCheck {
            wstamp: 99 * ms,
            ..base
        }));
        // Two segments of room: a full skb.
        assert!(!should_defer(&DeferCheck {
            in_flight: 8,
            ..base
        }));
        // A third of cwnd fits: cwnd 3, 1 of room.
        assert!(!should_defer(&DeferCheck {
            cwnd: 3,
            in_flight: 2,
            ..base
        }));
        // The oldest segment left 19 ms ago, under half an SRTT (20 ms): its ACK comes soon.
        assert!(!should_defer(&DeferCheck {
            head_sent: Some(81 * ms),
            ..base
        }));
        assert!(should_defer(&DeferCheck {
            head_sent: Some(80 * ms),
            ..base
        }));
    }
}
