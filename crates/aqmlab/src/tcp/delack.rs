//! Linux's delayed-ACK engine (`timer_model = "linux"`): quick-ACK mode, the adaptive ACK
//! timeout (ATO) and interactive ("ping-pong") mode, as `net/ipv4/tcp_input.c`
//! (`tcp_event_data_recv`, `tcp_incr_quickack`, `tcp_enter_quickack_mode`,
//! `__tcp_ack_snd_check`), `tcp_output.c` (`tcp_send_delayed_ack`, `tcp_event_data_sent`,
//! `tcp_event_ack_sent` → `tcp_dec_quickack_mode`) and `tcp_timer.c`
//! (`tcp_delack_timer_handler`) of Linux 6.x do them. Times are jiffies.
//!
//! - The first data segment of a connection, a segment after a silence longer than the RTO,
//!   and a duplicate segment (a retransmission) allow the next 16 ACKs to go at once
//!   (`TCP_MAX_QUICKACKS`; Linux takes `min(16, rcv_wnd / 2·rcv_mss)`, 16 for any window
//!   above 32 segments); CE on data, when not already echoed, allows 2.
//! - Outside quick-ACK mode an ACK goes at once when more than one full segment is
//!   unacknowledged, else after the ATO: 40 ms (`TCP_ATO_MIN`) at first, then adapted to the
//!   gaps between data segments, bounded by the receiver's SRTT (at least 40 ms), by 500 ms,
//!   or 200 ms (`TCP_DELACK_MAX`) in ping-pong mode, and at most 200 ms.
//! - Sending data within one ATO of receiving it counts an exchange: the connection is
//!   interactive (`tcp_pingpong_thresh` = 1) and quick-ACK mode is off until a delayed-ACK
//!   timer fires, which leaves ping-pong mode; outside it a fired timer doubles the ATO (at
//!   most the RTO).
//!
//! Not modelled: the quick ACKs Linux adds while receive-buffer auto-tuning grows the window
//! (`tcp_grow_window` sets one more) — the model's window is fixed at its maximum (docs/tcp.md);
//! the `ICSK_ACK_PUSHED` bound on the ATO; ACK compression of SACKs (`tcp_comp_sack_*`).

/// `TCP_MAX_QUICKACKS`.
pub const MAX_QUICKACKS: u8 = 16;
/// `tcp_pingpong_thresh` (Linux ≥ 5.1 default).
const PINGPONG_THRESH: u8 = 1;

/// Per-connection receiver state (`icsk_ack`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinuxAck {
    /// ACKs that may still go at once (`icsk_ack.quick`).
    pub quick: u8,
    /// Exchanges counted (`icsk_ack.pingpong`).
    pub pingpong: u8,
    /// The ACK timeout in jiffies; 0 before the first data segment.
    pub ato: u64,
    /// Jiffy of the last data segment received (`lrcvtime`).
    pub lrcvtime: u64,
    /// Data arrived since the last ACK went out (`ICSK_ACK_SCHED`).
    pub scheduled: bool,
    /// Nominal jiffy of the pending delayed ACK (`icsk_ack.timeout`); 0 if none.
    pub timeout: u64,
}

/// The engine's constants in jiffies: `ato_min` = `TCP_ATO_MIN` = `TCP_DELACK_MIN` (HZ/25,
/// the configuration's `delack_interval_ms`), `delack_max` = `TCP_DELACK_MAX` (HZ/5), and
/// HZ/2.
#[derive(Clone, Copy, Debug)]
pub struct AckClock {
    pub ato_min: u64,
    pub delack_max: u64,
    pub half_second: u64,
}

impl LinuxAck {
    fn incr_quick(&mut self, max: u8) {
        self.quick = self.quick.max(max);
    }

    /// `tcp_enter_quickack_mode`.
    pub fn enter_quickack(&mut self, max: u8, clock: &AckClock) {
        self.incr_quick(max);
        self.pingpong = 0;
        self.ato = clock.ato_min;
    }

    /// `tcp_in_quickack_mode`.
    #[inline]
    pub fn in_quickack(&self) -> bool {
        self.quick > 0 && self.pingpong < PINGPONG_THRESH
    }

    /// A data segment in sequence at jiffy `now` (`tcp_event_data_recv`); `rto` is the
    /// receiver's own RTO in jiffies.
    pub fn on_data(&mut self, now: u64, rto: u64, clock: &AckClock) {
        self.scheduled = true;
        if self.ato == 0 {
            self.incr_quick(MAX_QUICKACKS);
            self.ato = clock.ato_min;
        } else {
            let m = now.saturating_sub(self.lrcvtime);
            if m <= clock.ato_min / 2 {
                self.ato = (self.ato >> 1) + clock.ato_min / 2;
            } else if m < self.ato {
                self.ato = ((self.ato >> 1) + m).min(rto);
            } else if m > rto {
                self.incr_quick(MAX_QUICKACKS);
            }
        }
        self.lrcvtime = now;
    }

    /// A segment carrying an acknowledgment goes out (`tcp_event_ack_sent`): one quick ACK is
    /// used if data was waiting for it; leaving quick-ACK mode resets the ATO.
    pub fn on_ack_sent(&mut self, clock: &AckClock) {
        if self.quick > 0 && self.scheduled {
            self.quick -= 1;
            if self.quick == 0 {
                self.ato = clock.ato_min;
            }
        }
        self.scheduled = false;
    }

    /// Data goes out at jiffy `now` (`tcp_event_data_sent`): a reply within one ATO of the
    /// last data received is an exchange.
    pub fn on_data_sent(&mut self, now: u64) {
        if now.saturating_sub(self.lrcvtime) < self.ato {
            self.pingpong = self.pingpong.saturating_add(1);
        }
    }

    /// The delayed-ACK timeout in jiffies from now (`tcp_send_delayed_ack`); `srtt` is the
    /// receiver's SRTT in jiffies, rounded up (0 if none).
    pub fn delay(&self, srtt: u64, clock: &AckClock) -> u64 {
        let mut ato = self.ato.max(clock.ato_min);
        if ato > clock.ato_min {
            let mut max_ato = if self.pingpong >= PINGPONG_THRESH {
                clock.delack_max
            } else {
                clock.half_second
            };
            if srtt > 0 {
                max_ato = max_ato.min(srtt.max(clock.ato_min));
            }
            ato = ato.min(max_ato);
        }
        ato.min(clock.delack_max)
    }

    /// The delayed-ACK timer fired with an ACK pending (`tcp_delack_timer_handler`): outside
    /// ping-pong mode the ATO doubles (at most the RTO); in it, the mode ends and the ATO
    /// goes back to its minimum.
    pub fn on_timer(&mut self, rto: u64, clock: &AckClock) {
        if self.pingpong < PINGPONG_THRESH {
            self.ato = (self.ato << 1).min(rto);
        } else {
            self.pingpong = 0;
            self.ato = clock.ato_min;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// HZ = 250: 40 ms = 10 jiffies, 200 ms = 50, 500 ms = 125.
    const CLOCK: AckClock = AckClock {
        ato_min: 10,
        delack_max: 50,
        half_second: 125,
    };

    #[test]
    fn the_first_sixteen_acks_are_quick_then_delayed() {
        let mut a = LinuxAck::default();
        for i in 0..16 {
            a.on_data(100 + i, 61, &CLOCK);
            assert!(a.in_quickack(), "ACK {i}");
            a.on_ack_sent(&CLOCK);
        }
        a.on_data(120, 61, &CLOCK);
        assert!(!a.in_quickack());
        // Back-to-back segments (gap 1 jiffy ≤ 5): ATO = 10/2 + 5 = 10 jiffies.
        assert_eq!(a.ato, 10);
        assert_eq!(a.delay(11, &CLOCK), 10);
    }

    #[test]
    fn ato_follows_the_gaps_between_segments_bounded_by_srtt() {
        let mut a = LinuxAck {
            ato: 10,
            lrcvtime: 0,
            ..Default::default()
        };
        // Gaps of 8 jiffies (< ATO): ATO = 10/2 + 8 = 13, then 13/2 + 8 = 14.
        a.on_data(8, 61, &CLOCK);
        assert_eq!(a.ato, 13);
        a.on_data(16, 61, &CLOCK);
        assert_eq!(a.ato, 14);
        // The timeout is bounded by SRTT (12 jiffies here), not below 40 ms.
        assert_eq!(a.delay(12, &CLOCK), 12);
        assert_eq!(a.delay(3, &CLOCK), 10);
        assert_eq!(a.delay(0, &CLOCK), 14);
        // A fired timer doubles it (at most the RTO, 20 jiffies here).
        a.on_timer(20, &CLOCK);
        assert_eq!(a.ato, 20);
    }

    #[test]
    fn a_silence_longer_than_the_rto_brings_quick_acks_back() {
        let mut a = LinuxAck {
            ato: 10,
            lrcvtime: 0,
            ..Default::default()
        };
        a.on_data(62, 61, &CLOCK);
        assert_eq!(a.quick, MAX_QUICKACKS);
        assert!(a.in_quickack());
    }

    #[test]
    fn a_reply_within_the_ato_makes_the_connection_interactive() {
        let mut a = LinuxAck::default();
        a.on_data(100, 61, &CLOCK);
        a.on_data_sent(105);
        assert_eq!(a.pingpong, 1);
        assert!(!a.in_quickack(), "ping-pong mode holds quick ACKs back");
        // Ping-pong bounds a long ATO by 200 ms; the timer ends the mode.
        a.ato = 100;
        assert_eq!(a.delay(0, &CLOCK), 50);
        a.on_timer(61, &CLOCK);
        assert_eq!((a.pingpong, a.ato), (0, 10));
        assert!(a.in_quickack());
    }
}
