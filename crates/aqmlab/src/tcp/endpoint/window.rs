//! The congestion window of the classic stacks (4.4BSD, ns-2 Full-TCP): its growth per ACK
//! (slow start and congestion avoidance, RFC 5681 §3.1 as 4.4BSD `tcp_input` and ns-2
//! `opencwnd` code it, ns-2's window kept as its double `cwnd_`), and its reductions: the
//! halving of 4.4BSD (or ns-2.35's exact one), the slow-start threshold after a loss or an
//! ECE (or the Linux algorithm's `ssthresh`), and the ECE reduction of RFC 3168 §6.1.2.

use super::{prr_mut, segments, Endpoint, MAX_CWND};
use crate::tcp::config::{TcpConfig, TimerModel};

impl Endpoint {
    /// Slow start below ssthresh (+1 MSS per ACK), congestion avoidance above it
    /// (+MSS²/cwnd per ACK): RFC 5681 §3.1 as coded in 4.4BSD tcp_input and ns-2. At
    /// cwnd = ssthresh, 4.4BSD still slow-starts (`if (cw > snd_ssthresh)` linear); ns-2's
    /// `opencwnd` slow-starts only while `cwnd_ < ssthresh_`.
    ///
    /// ns-2 (`TcpAgent::opencwnd`, wnd_option_ 1) keeps cwnd_ in segments as a double and
    /// adds `1/cwnd_`; whole bytes would lose up to a byte per ACK, enough to shift the ACK
    /// at which the window admits one more segment, so the ns-2 model keeps ns-2's number.
    pub(super) fn open_cwnd(&mut self, cfg: &TcpConfig) {
        let mss = cfg.mss as u64;
        match cfg.timer_model {
            TimerModel::Bsd | TimerModel::Linux => {
                let incr = if self.cwnd > self.ssthresh {
                    (mss * mss / self.cwnd).max(1)
                } else {
                    mss
                };
                self.cwnd = (self.cwnd + incr).min(MAX_CWND);
            },
            TimerModel::Ns2 => {
                let m = mss as f64;
                let mut w = self.ns2_cwnd_segments(m);
                w += if w < self.ssthresh as f64 / m {
                    1.0
                } else {
                    1.0 / w
                };
                self.cwnd = self.set_ns2_cwnd(w, m);
            },
        }
    }

    /// ns-2's `cwnd_` (segments): the kept double while `cwnd` is still the value it gave,
    /// else `cwnd` itself (changed elsewhere in whole bytes).
    fn ns2_cwnd_segments(&self, mss: f64) -> f64 {
        if self.ns2_cwnd_bytes == self.cwnd {
            self.ns2_cwnd
        } else {
            self.cwnd as f64 / mss
        }
    }

    /// Keeps `w` segments as ns-2's double; returns the window in whole bytes (not set).
    fn set_ns2_cwnd(&mut self, w: f64, mss: f64) -> u64 {
        let bytes = ((w * mss) as u64).min(MAX_CWND);
        self.ns2_cwnd = w;
        self.ns2_cwnd_bytes = bytes;
        bytes
    }

    /// cwnd = min(cwnd, rwnd) / 2 exactly (ns-2.35 `slowdown` with `precisionReduce_`: half
    /// of `windowd()`, kept as ns-2's double for the window's later growth), at least 1 MSS.
    pub(super) fn exact_half(&mut self, cfg: &TcpConfig) -> u64 {
        let m = cfg.mss as f64;
        let half = (self.ns2_cwnd_segments(m).min(cfg.rwnd as f64 / m) / 2.0).max(1.0);
        self.set_ns2_cwnd(half, m)
    }

    /// `max(min(cwnd, rwnd)/2, 2·MSS)`, rounded down to whole segments (4.4BSD).
    pub(super) fn halved_window(&self, cfg: &TcpConfig) -> u64 {
        let mss = cfg.mss as u64;
        let win = self.cwnd.min(cfg.rwnd as u64) / 2 / mss;
        win.max(2) * mss
    }

    /// The slow-start threshold after a window reduction (fast retransmit, ECE): the stack's
    /// halving, or the Linux algorithm's `ssthresh` of cwnd in segments.
    pub(super) fn cut_ssthresh(&mut self, cfg: &TcpConfig) -> u64 {
        let mss = cfg.mss as u64;
        if let Some(lx) = self.linux.as_deref_mut() {
            return lx.ssthresh(segments(self.cwnd, mss)) as u64 * mss;
        }
        self.halved_window(cfg)
    }

    /// RFC 3168 §6.1.2: halve cwnd and reduce ssthresh, no retransmission, and do not grow the
    /// window on this ACK (as ns-2's `slowdown(CLOSE_CWND_HALF | CLOSE_SSTHRESH_HALF)`).
    /// Both halve the usable window, `min(cwnd, rwnd)` (ns-2 `slowdown` halves `window()`,
    /// FreeBSD's `tcp_congestion_exp` `min(snd_wnd, snd_cwnd)`), in whole segments: a cwnd
    /// grown past the receiver's window is no excuse for a weaker reduction. ns-2 has no
    /// floor of 2 segments here (`int(window()/2)`); ours keeps BSD's, as for a loss.
    pub(super) fn ecn_reduce(&mut self, cfg: &TcpConfig) {
        let mss = cfg.mss as u64;
        let cwnd = segments(self.cwnd, mss);
        self.ssthresh = match self.linux.as_deref_mut() {
            // DCTCP cuts cwnd·α/2 (`dctcp_ssthresh`); the others as for a loss.
            Some(lx) => lx.ssthresh_ece(cwnd) as u64 * mss,
            None => self.cut_ssthresh(cfg),
        };
        if let Some(p) = prr_mut(&mut self.linux) {
            // Linux's CWR state: PRR brings cwnd down to ssthresh over the window.
            p.start(cwnd, Some(self.snd_max));
        } else {
            self.cwnd = if cfg.exact_halving && self.linux.is_none() {
                self.exact_half(cfg)
            } else {
                self.ssthresh
            };
        }
        self.ecn_reduced = true;
        self.ns2_after_fast_rexmit = false; // CWND_ACTION_ECN
        self.ecn.on_reduction(self.snd_max, true);
    }
}
