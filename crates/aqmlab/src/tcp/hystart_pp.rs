//! HyStart++ (RFC 9406), the IETF's slow-start exit, as an option of the Linux-style senders
//! (`hystart_plus_plus = true`; Linux itself runs CUBIC's HyStart, `tcp/cubic.rs`).
//!
//! Rounds end when the cumulative ACK reaches `window_end` (SND.NXT when the round began).
//! With at least `N_RTT_SAMPLE` RTT samples in a round, a minimum RTT that rose by
//! `RttThresh` = clamp(lastRoundMinRTT / 8, 4 ms, 16 ms) over the last round's ends standard
//! slow start and begins Conservative Slow Start (CSS, §4.2): growth divided by
//! `CSS_GROWTH_DIVISOR`; a round in CSS whose minimum RTT falls below the RTT that started it
//! resumes slow start (a spurious exit); `CSS_ROUNDS` rounds of CSS end slow start
//! (ssthresh = cwnd), the round CSS began in counting as the first. Without pacing the increase per ACK is at most `L` = 8 segments. It
//! runs only in the first slow start, while ssthresh is still at its initial value (§4.3:
//! RECOMMENDED); a loss, an ECN reduction or a timeout ends it (`stop`).
//!
//! The window is in whole segments, as Linux keeps it; CSS's quarter-growth is kept exact
//! by carrying the remainder of the ACKed segments (`css_carry`).

use crate::units::{Time, MS};

/// RFC 9406 §4.3 constants.
pub const MIN_RTT_THRESH: Time = 4 * MS;
pub const MAX_RTT_THRESH: Time = 16 * MS;
pub const MIN_RTT_DIVISOR: Time = 8;
pub const N_RTT_SAMPLE: u32 = 8;
pub const CSS_GROWTH_DIVISOR: u32 = 4;
pub const CSS_ROUNDS: u32 = 5;
/// The per-ACK increase limit of a sender that does not pace.
pub const L_UNPACED: u32 = 8;

const NONE: Time = Time::MAX;

/// Where HyStart++ stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    SlowStart,
    /// Conservative Slow Start since the round that began with this minimum RTT.
    Css {
        baseline: Time,
        rounds: u32,
    },
    /// Slow start is over (CSS_ROUNDS of CSS, a loss, a reduction), or never ran.
    Done,
}

#[derive(Clone, Debug)]
pub struct HystartPP {
    pub phase: Phase,
    last_round_min_rtt: Time,
    current_round_min_rtt: Time,
    rtt_sample_count: u32,
    window_end: u64,
    css_carry: u32,
    /// cwnd (segments) when CSS began and when slow start ended, for inspection.
    pub css_entered_at: Option<u32>,
    pub exited_at: Option<u32>,
}

impl HystartPP {
    /// The connection's first slow start begins; the first round ends at `snd_nxt`.
    pub fn new(snd_nxt: u64) -> Self {
        HystartPP {
            phase: Phase::SlowStart,
            last_round_min_rtt: NONE,
            current_round_min_rtt: NONE,
            rtt_sample_count: 0,
            window_end: snd_nxt,
            css_carry: 0,
            css_entered_at: None,
            exited_at: None,
        }
    }

    /// Active: the first slow start is still under way.
    #[inline]
    pub fn active(&self) -> bool {
        self.phase != Phase::Done
    }

    /// An ACK moved the cumulative ACK to `snd_una` with `snd_nxt` the next new byte: a round
    /// ends when it reaches `window_end` (§4.2: "at the start of each round").
    pub fn on_ack(&mut self, snd_una: u64, snd_nxt: u64) {
        if !self.active() || snd_una < self.window_end {
            return;
        }
        self.last_round_min_rtt = self.current_round_min_rtt;
        self.current_round_min_rtt = NONE;
        self.rtt_sample_count = 0;
        self.window_end = snd_nxt;
        if let Phase::Css { rounds, .. } = &mut self.phase {
            *rounds += 1;
        }
    }

    /// An RTT sample (§4.2): in slow start, an increase of the round's minimum by RttThresh
    /// over the last round's enters CSS; in CSS, a round minimum below the baseline goes back
    /// to slow start. `cwnd` (segments) is recorded at the change.
    pub fn on_rtt(&mut self, rtt: Time, cwnd: u32) {
        if !self.active() {
            return;
        }
        self.current_round_min_rtt = self.current_round_min_rtt.min(rtt);
        self.rtt_sample_count += 1;
        if self.rtt_sample_count < N_RTT_SAMPLE || self.current_round_min_rtt == NONE {
            return;
        }
        match self.phase {
            Phase::SlowStart if self.last_round_min_rtt != NONE => {
                let thresh = (self.last_round_min_rtt / MIN_RTT_DIVISOR)
                    .clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
                if self.current_round_min_rtt >= self.last_round_min_rtt + thresh {
                    self.phase = Phase::Css {
                        baseline: self.current_round_min_rtt,
                        rounds: 0,
                    };
                    self.css_carry = 0;
                    self.css_entered_at = Some(cwnd);
                }
            },
            Phase::Css { baseline, .. } if self.current_round_min_rtt < baseline => {
                self.phase = Phase::SlowStart;
            },
            _ => {},
        }
    }

    /// The increase for `acked` segments newly delivered below ssthresh (§4.2: `min(N,
    /// L·SMSS)` in slow start, `min(N, L·SMSS) / CSS_GROWTH_DIVISOR` in CSS); `paced` lifts
    /// `L`. Returns (segments to add, slow start is over: set ssthresh = cwnd).
    pub fn growth(&mut self, acked: u32, paced: bool) -> (u32, bool) {
        let n = if paced { acked } else { acked.min(L_UNPACED) };
        match self.phase {
            Phase::SlowStart => (n, false),
            Phase::Css { rounds, .. } => {
                if rounds >= CSS_ROUNDS {
                    self.phase = Phase::Done;
                    return (0, true);
                }
                self.css_carry += n;
                let add = self.css_carry / CSS_GROWTH_DIVISOR;
                self.css_carry %= CSS_GROWTH_DIVISOR;
                (add, false)
            },
            Phase::Done => (n, false),
        }
    }

    /// A loss, an ECN reduction or a timeout: HyStart++ is over for this connection.
    pub fn stop(&mut self) {
        self.phase = Phase::Done;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One round of `n` samples of `rtt` ending at sequence `end` (the next round ends at
    /// `end + 1000`).
    fn round(h: &mut HystartPP, end: u64, rtt: Time, n: u32, cwnd: u32) {
        for _ in 0..n {
            h.on_rtt(rtt, cwnd);
        }
        h.on_ack(end, end + 1000);
    }

    /// §4.2 with a 40 ms path: RttThresh = clamp(40/8, 4, 16) = 5 ms. A round at 44 ms stays
    /// in slow start; one at 45 ms enters CSS; 7 samples are not enough to decide.
    #[test]
    fn css_starts_when_the_round_minimum_rises_by_rtt_thresh() {
        let mut h = HystartPP::new(1000);
        round(&mut h, 1000, 40 * MS, 8, 10);
        round(&mut h, 2000, 44 * MS, 8, 20);
        assert_eq!(h.phase, Phase::SlowStart);
        // 7 samples at 60 ms: undecided; the 8th decides.
        for _ in 0..7 {
            h.on_rtt(60 * MS, 40);
        }
        assert_eq!(h.phase, Phase::SlowStart);
        h.on_rtt(45 * MS, 41);
        // The round's minimum, 45 ms, is below 44 + clamp(44/8, 4, 16) = 49.5 ms.
        assert_eq!(h.phase, Phase::SlowStart);
        h.on_ack(3000, 4000);
        round(&mut h, 4000, 50 * MS, 8, 60);
        // Last round's minimum 45 ms → thresh 5.625 ms; 50 < 50.625: still slow start.
        assert_eq!(h.phase, Phase::SlowStart);
        round(&mut h, 5000, 56 * MS, 8, 80);
        // Last round 50 ms → thresh 6.25 ms: 56 < 56.25, still slow start; then 56 ms →
        // thresh 7 ms: 64 enters CSS (baseline 64 ms, at cwnd 80); the round it began in
        // counts as its first.
        assert_eq!(h.phase, Phase::SlowStart);
        round(&mut h, 6000, 64 * MS, 8, 80);
        assert_eq!(
            h.phase,
            Phase::Css {
                baseline: 64 * MS,
                rounds: 1
            }
        );
        assert_eq!(h.css_entered_at, Some(80));
    }

    /// RttThresh bounds: 4 ms below a 32 ms RTT, 16 ms above 128 ms.
    #[test]
    fn rtt_thresh_is_clamped() {
        for (last, just_below, at) in [(10, 13, 14), (200, 215, 216)] {
            for (rtt, css) in [(just_below, false), (at, true)] {
                let mut h = HystartPP::new(1000);
                round(&mut h, 1000, last * MS, 8, 10);
                round(&mut h, 2000, rtt * MS, 8, 20);
                assert_eq!(h.phase != Phase::SlowStart, css, "{last} ms then {rtt} ms");
            }
        }
    }

    /// CSS grows by a quarter of the ACKed segments (the remainder carried), goes back to
    /// slow start when a round's minimum falls below the baseline, and after 5 rounds ends
    /// slow start.
    #[test]
    fn css_growth_spurious_exit_and_end() {
        let mut h = HystartPP::new(1000);
        h.phase = Phase::Css {
            baseline: 50 * MS,
            rounds: 0,
        };
        let added: u32 = (0..10).map(|_| h.growth(2, false).0).sum();
        assert_eq!(added, 5, "20 segments ACKed, a quarter of them added");
        assert_eq!(h.growth(20, false), (2, false), "L = 8 unpaced: 8/4");
        // A round at 48 ms < baseline 50: back to slow start.
        round(&mut h, 1000, 48 * MS, 8, 30);
        assert_eq!(h.phase, Phase::SlowStart);
        // Five CSS rounds end slow start on the next growth.
        h.phase = Phase::Css {
            baseline: 50 * MS,
            rounds: 0,
        };
        for k in 0..5 {
            round(&mut h, 2000 + 1000 * k, 60 * MS, 8, 40);
        }
        assert_eq!(h.growth(2, false), (0, true));
        assert_eq!(h.phase, Phase::Done);
    }
}
