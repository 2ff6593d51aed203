//! DCTCP's sender state and α update as Linux `net/ipv4/tcp_dctcp.c` keeps them (RFC 8257),
//! in Linux's integer arithmetic; run in Linux's congestion-control framework (`tcp/cong.rs`),
//! its state in the Linux state's cold part (`tcp/cong_cold.rs`).

/// DCTCP's sender state as Linux `tcp_dctcp.c` keeps it: α in 1/1024 units, and the
/// observation window, which ends when snd_una reaches `next_seq` (snd_nxt when it began);
/// segments delivered in it, and those delivered by ACKs with ECE (`tp->delivered`,
/// `tp->delivered_ce`).
#[derive(Clone, Debug)]
pub struct Dctcp {
    pub alpha: u32,
    pub next_seq: u64,
    pub delivered: u64,
    pub delivered_ce: u64,
    old_delivered: u64,
    old_delivered_ce: u64,
    /// Observation windows ended (α updates).
    pub windows: u64,
}

/// `DCTCP_MAX_ALPHA`: α = 1.
pub const DCTCP_MAX_ALPHA: u32 = 1024;
/// `dctcp_shift_g`: g = 1/16.
pub const DCTCP_SHIFT_G: u32 = 4;

impl Dctcp {
    /// `dctcp_init`: α starts at `dctcp_alpha_on_init` = 1024, the first window at `snd_nxt`.
    pub(crate) fn new(snd_nxt: u64) -> Self {
        Dctcp {
            alpha: DCTCP_MAX_ALPHA,
            next_seq: snd_nxt,
            delivered: 0,
            delivered_ce: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            windows: 0,
        }
    }

    /// Every ACK not older than snd_una (`dctcp_update_alpha` from `in_ack_event`, after the
    /// ACK's `delivered` segments are counted, `ece` its ECE flag): once snd_una reaches
    /// `next_seq`, α ← α − max(α >> g, min(α, 1)) + (ce << (10 − g)) / delivered, at most
    /// 1024, and a new window starts at `snd_nxt`.
    pub fn on_ack(&mut self, delivered: u32, ece: bool, snd_una: u64, snd_nxt: u64) {
        self.delivered += delivered as u64;
        if ece {
            self.delivered_ce += delivered as u64;
        }
        if snd_una < self.next_seq {
            return;
        }
        let delivered = self.delivered - self.old_delivered;
        let ce = self.delivered_ce - self.old_delivered_ce;
        self.alpha = update_alpha(self.alpha, delivered, ce);
        self.windows += 1;
        self.next_seq = snd_nxt;
        self.old_delivered = self.delivered;
        self.old_delivered_ce = self.delivered_ce;
    }

    /// `dctcp_ssthresh`: cwnd − cwnd·α/2 (cwnd·α >> 11), at least 2 segments.
    pub fn ssthresh(&self, cwnd: u32) -> u32 {
        let cut = ((cwnd as u64 * self.alpha as u64) >> 11) as u32;
        (cwnd - cut).max(2)
    }
}

/// One α update in Linux's integer arithmetic (`dctcp_update_alpha`): `min_not_zero(α,
/// α >> g)` is taken off, then the marked fraction scaled to 1024 >> g is added.
pub fn update_alpha(alpha: u32, delivered: u64, ce: u64) -> u32 {
    let shifted = alpha >> DCTCP_SHIFT_G;
    let decay = if shifted == 0 { alpha } else { shifted };
    let mut a = alpha - decay;
    if ce > 0 {
        let add = (ce << (10 - DCTCP_SHIFT_G)) / delivered.max(1);
        a = (a as u64 + add).min(DCTCP_MAX_ALPHA as u64) as u32;
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DCTCP's α update and cut in Linux's integer arithmetic.
    #[test]
    fn dctcp_alpha_and_cut() {
        // No marks: 1024 → 960 (1024 >> 4 = 64 off); below 16, min_not_zero takes it all.
        assert_eq!(update_alpha(1024, 10, 0), 960);
        assert_eq!(update_alpha(15, 10, 0), 0);
        assert_eq!(update_alpha(0, 10, 0), 0);
        // All marked: stays at 1024 (capped); 3 of 10: 960 + 192/10 = 979.
        assert_eq!(update_alpha(1024, 10, 10), 1024);
        assert_eq!(update_alpha(1024, 10, 3), 979);
        // Nothing delivered but a mark counted: divided by 1, capped.
        assert_eq!(update_alpha(512, 0, 1), 480 + 64);
        let mut d = Dctcp::new(1);
        assert_eq!(d.ssthresh(100), 50, "α = 1 halves");
        d.alpha = 256;
        assert_eq!(d.ssthresh(100), 100 - 12, "α/2 = 1/8: 100·256 >> 11 = 12");
        assert_eq!(d.ssthresh(2), 2);
        d.alpha = 0;
        assert_eq!(d.ssthresh(100), 100);
    }
}
