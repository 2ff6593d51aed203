//! CAKE's ACK filter (tc-cake `ack-filter`, `ack-filter-aggressive`; Linux `cake_ack_filter`,
//! `cake_tcph_may_drop`, `cake_tcph_sack_compare`).
//!
//! When a TCP ACK joins a flow queue, an earlier *pure* ACK of the same connection and
//! direction still queued is redundant if the new one acknowledges at least as much (its
//! cumulative ACK is not lower and its SACK blocks cover the older one's) and the ECN flags
//! (ECE, CWR) would not be lost. Linux drops the redundant ACK nearest the head once it has
//! found two eligible ones (so one stays to keep the ACK clock); the aggressive mode also
//! drops a single eligible ACK that sits directly before the new one with the same ECN flags.
//!
//! aqmlab's TCP headers carry no timestamp option values, so Linux's timestamp test (an older
//! ACK with a newer timestamp is kept) has nothing to compare and always passes.

use crate::packet::{flags, Packet, Proto};

/// tc-cake's ACK filter keywords.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AckFilter {
    #[default]
    NoAckFilter,
    AckFilter,
    AckFilterAggressive,
}

const ECN_FLAGS: u8 = flags::ECE | flags::CWR;

/// Whether `a`'s SACK information is covered by `b`'s (Linux `cake_tcph_sack_compare`):
/// −1 when `a` SACKs something `b` does not (or carries a D-SACK below its cumulative ACK),
/// 1 when `b` covers all of `a` and SACKs more bytes, 0 when equal.
fn sack_compare(a: &Packet, b: &Packet) -> i32 {
    let sa = &a.sack[..a.sack_n as usize];
    let sb = &b.sack[..b.sack_n as usize];
    match (sa.is_empty(), sb.is_empty()) {
        (false, true) => return -1,
        (true, false) => return 1,
        (true, true) => return 0,
        (false, false) => {},
    }
    let bytes = |s: &[(u64, u64)]| s.iter().map(|&(x, y)| y.saturating_sub(x)).sum::<u64>();
    for &(start, end) in sa {
        if start < a.ack {
            return -1; // D-SACK: never drop
        }
        if !sb.iter().any(|&(s, e)| s <= start && e >= end) {
            return -1;
        }
    }
    if bytes(sb) > bytes(sa) {
        1
    } else {
        0
    }
}

/// A queued packet that may be dropped for a newer ACK (Linux `cake_tcph_may_drop` and the
/// pure-ACK tests): only the ACK flag among SYN/FIN/RST (ECE/CWR checked apart), no payload.
fn pure_ack(p: &Packet) -> bool {
    p.flags & !ECN_FLAGS == flags::ACK && p.len == 0
}

/// The position (from the head, among `earlier`) of the queued ACK that `trigger`, just
/// appended at the tail of the same flow queue, makes redundant, if any.
pub fn victim<'a>(
    trigger: &Packet,
    earlier: impl Iterator<Item = &'a Packet>,
    aggressive: bool,
) -> Option<usize> {
    if trigger.proto != Proto::Tcp || trigger.flags & (flags::ACK | flags::SYN) != flags::ACK {
        return None;
    }
    let mut elig: Option<(usize, u8)> = None;
    let mut found = 0u32;
    let mut last = None;
    for (i, p) in earlier.enumerate() {
        last = Some(i);
        if p.proto != Proto::Tcp
            || p.conn != trigger.conn
            || p.gen != trigger.gen
            || p.to_server != trigger.to_server
        {
            continue;
        }
        // A change of ECN flags since the first eligible ACK: dropping that one would lose
        // the change.
        if let Some((_, f)) = elig {
            if p.flags & ECN_FLAGS != f {
                elig = None;
                found = found.saturating_sub(1);
            }
        }
        if !pure_ack(p) || p.ack > trigger.ack {
            continue;
        }
        let cmp = sack_compare(p, trigger);
        if cmp < 0 || (p.ack == trigger.ack && cmp == 0) {
            continue;
        }
        if elig.is_none() {
            elig = Some((i, p.flags & ECN_FLAGS));
        }
        found += 1;
        if found > 1 {
            return elig.map(|(i, _)| i);
        }
    }
    match elig {
        Some((i, f)) if aggressive && Some(i) == last && f == trigger.flags & ECN_FLAGS => Some(i),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(ack: u64) -> Packet {
        Packet {
            size: 40,
            flags: flags::ACK,
            ack,
            conn: 3,
            ..Default::default()
        }
    }

    /// Queue [ACK 1000, ACK 2000], new ACK 3000: both eligible, so the one nearest the head
    /// (position 0) goes; with one eligible ACK only the aggressive mode drops it, and only
    /// when it is directly before the new one.
    #[test]
    fn drops_redundant_pure_acks() {
        let q = [ack(1000), ack(2000)];
        assert_eq!(victim(&ack(3000), q.iter(), false), Some(0));
        let one = [ack(1000)];
        assert_eq!(victim(&ack(3000), one.iter(), false), None);
        assert_eq!(victim(&ack(3000), one.iter(), true), Some(0));
        // Another connection's ACK in between: not directly before.
        let mut other = ack(5000);
        other.conn = 4;
        let split = [ack(1000), other];
        assert_eq!(victim(&ack(3000), split.iter(), true), None);
    }

    #[test]
    fn keeps_data_higher_acks_sack_and_ecn_changes() {
        let mut data = ack(1000);
        data.len = 1000;
        assert_eq!(victim(&ack(3000), [data, ack(2000)].iter(), false), None);
        // A queued ACK above the new one.
        assert_eq!(
            victim(&ack(3000), [ack(4000), ack(2000)].iter(), false),
            None
        );
        // Same cumulative ACK, no more SACK: not redundant.
        assert_eq!(
            victim(&ack(3000), [ack(3000), ack(3000)].iter(), false),
            None
        );
        // The old ACK SACKs a block the new one does not.
        let mut s = ack(1000);
        s.sack_n = 1;
        s.sack[0] = (5000, 6000);
        assert_eq!(victim(&ack(3000), [s, ack(2000)].iter(), false), None);
        // ... and one that covers it makes it redundant.
        let mut t = ack(3000);
        t.sack_n = 1;
        t.sack[0] = (4000, 6000);
        assert_eq!(victim(&t, [s, ack(2000)].iter(), false), Some(0));
        // ECE changes between the two eligible ACKs: the first is kept.
        let mut e = ack(2000);
        e.flags |= flags::ECE;
        assert_eq!(victim(&ack(3000), [ack(1000), e].iter(), false), None);
        // A SYN-ACK trigger filters nothing.
        let mut syn = ack(3000);
        syn.flags |= flags::SYN;
        assert_eq!(victim(&syn, [ack(1000), ack(2000)].iter(), false), None);
    }
}
