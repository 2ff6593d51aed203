//! Diffserv tins (paper §III-D; Linux `cake_config_besteffort`, `_precedence`,
//! `_diffserv8`, `_diffserv4`, `_diffserv3` and their DSCP tables).
//!
//! Each mode gives the tins' share of the base rate (the rate above which a tin loses its
//! priority when shaped) and DRR quantum (its weight when unshaped), and maps each of the 64
//! DSCPs to a tin. Tin 0 is Best Effort in diffserv3/4; the tables are Linux's, written as
//! rules on the codepoints.

/// tc-cake's Diffserv keywords.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Diffserv {
    Besteffort,
    Precedence,
    Diffserv8,
    Diffserv4,
    Diffserv3,
}

/// One tin's setup: its threshold rate in bytes/s (0 when unshaped) and quantum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TinSetup {
    pub rate: u64,
    pub quantum: u32,
}

impl Diffserv {
    pub fn tins(self) -> usize {
        match self {
            Diffserv::Besteffort => 1,
            Diffserv::Diffserv3 => 3,
            Diffserv::Diffserv4 => 4,
            Diffserv::Precedence | Diffserv::Diffserv8 => 8,
        }
    }

    /// The tin of a DSCP (0–63; higher values are masked to 6 bits).
    pub fn tin_of(self, dscp: u8) -> usize {
        let d = dscp & 63;
        match self {
            Diffserv::Besteffort => 0,
            // Class selector bits: 8 tins by precedence.
            Diffserv::Precedence => (d >> 3) as usize,
            // Bulk: LE (1), CS1 (8). Voice: TOS4 (4), VA (44), EF (46), CS6 (48), CS7 (56).
            Diffserv::Diffserv3 => match d {
                1 | 8 => 1,
                4 | 44 | 46 | 48 | 56 => 2,
                _ => 0,
            },
            // Bulk: LE, CS1. Video: TOS4, CS2, AF2x, CS3, AF3x, AF4x. Voice: CS4, CS5, VA,
            // EF, CS6, CS7.
            Diffserv::Diffserv4 => match d {
                1 | 8 => 1,
                4 | 16 | 18 | 20 | 22 | 24 | 26 | 28 | 30 | 34 | 36 | 38 => 2,
                32 | 40 | 44 | 46 | 48 | 56 => 3,
                _ => 0,
            },
            // 0 background (LE), 1 high throughput (TOS2, CS1, AF1x), 2 best effort,
            // 3 video (CS3, AF3x, AF4x), 4 low latency (TOS4, AF2x), 5 interactive (CS2),
            // 6 minimum latency (CS4, CS5, VA, EF), 7 network control (CS6, CS7).
            Diffserv::Diffserv8 => match d {
                1 => 0,
                2 | 8 | 10 | 12 | 14 => 1,
                24 | 26 | 28 | 30 | 34 | 36 | 38 => 3,
                4 | 18 | 20 | 22 => 4,
                16 => 5,
                32 | 40 | 44 | 46 => 6,
                48 | 56 => 7,
                _ => 2,
            },
        }
    }

    /// Tin rates and quanta for base rate `rate` (bytes/s, 0 = unshaped).
    pub fn setup(self, rate: u64) -> Vec<TinSetup> {
        let t = |rate, quantum| TinSetup { rate, quantum };
        match self {
            Diffserv::Besteffort => vec![t(rate, 65535)],
            // Each tin 7/8 of the previous one's rate and quantum, from 256.
            Diffserv::Precedence | Diffserv::Diffserv8 => {
                let (mut r, mut q) = (rate, 256u32);
                (0..8)
                    .map(|_| {
                        let s = t(r, q.max(1));
                        r = (r * 7) >> 3;
                        q = (q * 7) >> 3;
                        s
                    })
                    .collect()
            },
            Diffserv::Diffserv4 => vec![
                t(rate, 1024),
                t(rate >> 4, 64),
                t(rate >> 1, 512),
                t(rate >> 2, 256),
            ],
            Diffserv::Diffserv3 => vec![t(rate, 1024), t(rate >> 4, 64), t(rate >> 2, 256)],
        }
    }

    /// Order of the tins in tc's statistics (Linux `bulk_order` for diffserv3/4: Bulk first).
    pub fn stats_order(self) -> &'static [usize] {
        match self {
            Diffserv::Diffserv3 => &[1, 0, 2],
            Diffserv::Diffserv4 => &[1, 0, 2, 3],
            Diffserv::Besteffort => &[0],
            Diffserv::Precedence | Diffserv::Diffserv8 => &[0, 1, 2, 3, 4, 5, 6, 7],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_tables() {
        use Diffserv::*;
        // DSCP 0 (every aqmlab packet today) is Best Effort in every mode.
        assert_eq!(
            [Besteffort, Precedence, Diffserv8, Diffserv4, Diffserv3].map(|m| m.tin_of(0)),
            [0, 0, 2, 0, 0]
        );
        // EF (46), CS1 (8), AF41 (34), CS6 (48), AF11 (10), CS2 (16).
        let cps = [46u8, 8, 34, 48, 10, 16];
        assert_eq!(cps.map(|d| Diffserv3.tin_of(d)), [2, 1, 0, 2, 0, 0]);
        assert_eq!(cps.map(|d| Diffserv4.tin_of(d)), [3, 1, 2, 3, 0, 2]);
        assert_eq!(cps.map(|d| Diffserv8.tin_of(d)), [6, 1, 3, 7, 1, 5]);
        assert_eq!(cps.map(|d| Precedence.tin_of(d)), [5, 1, 4, 6, 1, 2]);
        // Every codepoint maps inside the mode's tins.
        for m in [Besteffort, Precedence, Diffserv8, Diffserv4, Diffserv3] {
            assert!((0..=255u8).all(|d| m.tin_of(d) < m.tins()));
        }
    }

    /// 10 Mbit/s = 1 250 000 B/s. diffserv3: Bulk 1/16, Voice 1/4; diffserv4: Video 1/2;
    /// diffserv8: ×7/8 per tin (truncated): 1250000, 1093750, 957031, 837402, …
    #[test]
    fn bandwidth_shares() {
        let r = 1_250_000;
        let d3 = Diffserv::Diffserv3.setup(r);
        assert_eq!(
            d3.iter().map(|t| t.rate).collect::<Vec<_>>(),
            [r, 78_125, 312_500]
        );
        assert_eq!(
            d3.iter().map(|t| t.quantum).collect::<Vec<_>>(),
            [1024, 64, 256]
        );
        let d4 = Diffserv::Diffserv4.setup(r);
        assert_eq!(
            d4.iter().map(|t| t.rate).collect::<Vec<_>>(),
            [r, 78_125, 625_000, 312_500]
        );
        let d8 = Diffserv::Diffserv8.setup(r);
        assert_eq!(
            d8[..4].iter().map(|t| t.rate).collect::<Vec<_>>(),
            [r, 1_093_750, 957_031, 837_402]
        );
        assert_eq!(
            d8.iter().map(|t| t.quantum).collect::<Vec<_>>(),
            [256, 224, 196, 171, 149, 130, 113, 98]
        );
        assert_eq!(
            Diffserv::Besteffort.setup(0),
            [TinSetup {
                rate: 0,
                quantum: 65535
            }]
        );
    }
}
