//! Mah's empirical HTTP/1.0 model [MAH97; model-facts §8.1]: seven CDFs, sampled by the
//! GloMoSim procedure (inverse transform, linear interpolation, byte sizes and counts rounded
//! up). The data files under `data/mah/` carry their source in their headers.
//!
//! The tables are shared (parse once with `MahModel::shared`); each user draws from its own
//! `Rng`, so the model itself holds no random state.

use super::dist::EmpiricalCdf;
use crate::rng::Rng;
use std::sync::OnceLock;

const PRIMARY_REQUEST: &str = include_str!("../../data/mah/primary_request.cdf");
const SECONDARY_REQUEST: &str = include_str!("../../data/mah/secondary_request.cdf");
const PRIMARY_REPLY: &str = include_str!("../../data/mah/primary_reply.cdf");
const SECONDARY_REPLY: &str = include_str!("../../data/mah/secondary_reply.cdf");
const FILES_PER_DOCUMENT: &str = include_str!("../../data/mah/files_per_document.cdf");
const CONSECUTIVE_DOCS: &str = include_str!("../../data/mah/consecutive_docs.cdf");
const THINK_TIME: &str = include_str!("../../data/mah/think_time.cdf");

/// The seven distributions of Mah's model.
#[derive(Clone, Debug)]
pub struct MahModel {
    pub primary_request: EmpiricalCdf,
    pub secondary_request: EmpiricalCdf,
    pub primary_reply: EmpiricalCdf,
    pub secondary_reply: EmpiricalCdf,
    pub files_per_document: EmpiricalCdf,
    pub consecutive_docs: EmpiricalCdf,
    pub think_time: EmpiricalCdf,
}

impl MahModel {
    /// Parses the embedded tables (about 5,000 points; a millisecond).
    pub fn new() -> Self {
        let p = |name: &str, text: &str, round_up: bool| {
            EmpiricalCdf::parse(text, round_up)
                .unwrap_or_else(|e| panic!("embedded Mah table {name}: {e}"))
        };
        MahModel {
            primary_request: p("primary_request", PRIMARY_REQUEST, true),
            secondary_request: p("secondary_request", SECONDARY_REQUEST, true),
            primary_reply: p("primary_reply", PRIMARY_REPLY, true),
            secondary_reply: p("secondary_reply", SECONDARY_REPLY, true),
            files_per_document: p("files_per_document", FILES_PER_DOCUMENT, true),
            consecutive_docs: p("consecutive_docs", CONSECUTIVE_DOCS, true),
            // Think time is continuous (seconds, 1 ms resolution in the data): not rounded.
            think_time: p("think_time", THINK_TIME, false),
        }
    }

    /// A process-wide instance, parsed on first use.
    pub fn shared() -> &'static MahModel {
        static MODEL: OnceLock<MahModel> = OnceLock::new();
        MODEL.get_or_init(MahModel::new)
    }

    /// Request length of a primary (HTML) file, bytes (0 occurs with probability 0.0012).
    pub fn sample_primary_request(&self, rng: &mut Rng) -> u64 {
        self.primary_request.sample(rng) as u64
    }

    /// Request length of a secondary (embedded) file, bytes.
    pub fn sample_secondary_request(&self, rng: &mut Rng) -> u64 {
        self.secondary_request.sample(rng) as u64
    }

    /// Reply length of a primary file, bytes (max 8,146,976).
    pub fn sample_primary_reply(&self, rng: &mut Rng) -> u64 {
        self.primary_reply.sample(rng) as u64
    }

    /// Reply length of a secondary file, bytes (max 246,212).
    pub fn sample_secondary_reply(&self, rng: &mut Rng) -> u64 {
        self.secondary_reply.sample(rng) as u64
    }

    /// Files in a document: the primary plus embedded ones (1..=65).
    pub fn sample_files_per_document(&self, rng: &mut Rng) -> u32 {
        self.files_per_document.sample(rng) as u32
    }

    /// Consecutive documents fetched from one server before choosing another (1..=37).
    pub fn sample_consecutive_docs(&self, rng: &mut Rng) -> u32 {
        self.consecutive_docs.sample(rng) as u32
    }

    /// User think time between documents, seconds (1.005 s to 86,395 s; not capped here).
    pub fn sample_think_time(&self, rng: &mut Rng) -> f64 {
        self.think_time.sample(rng)
    }
}

impl Default for MahModel {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamKind;
    use crate::workload::dist::ks::assert_ks;

    #[test]
    fn tables_have_the_source_point_counts_and_ranges() {
        let m = MahModel::shared();
        // Point counts declared in GloMoSim's http_distribution.c.
        assert_eq!(m.primary_request.len(), 305);
        assert_eq!(m.secondary_request.len(), 286);
        assert_eq!(m.primary_reply.len(), 1133);
        assert_eq!(m.secondary_reply.len(), 1848);
        assert_eq!(m.files_per_document.len(), 27);
        assert_eq!(m.consecutive_docs.len(), 21);
        assert_eq!(m.think_time.len(), 1649);
        assert_eq!(m.primary_reply.max(), 8_146_976.0);
        assert_eq!(m.secondary_reply.max(), 246_212.0);
        assert_eq!(m.think_time.min(), 1.005);
        assert_eq!(m.think_time.max(), 86_394.941);
    }

    #[test]
    fn quantiles_match_model_facts_appendix_b() {
        // (table, q, value) from model-facts Appendix B; tolerance 0.5 % (table rounding).
        let m = MahModel::shared();
        let cases: [(&EmpiricalCdf, f64, f64); 12] = [
            (&m.primary_request, 0.5, 238.0),
            (&m.primary_request, 0.9, 1113.0),
            (&m.secondary_request, 0.5, 226.0),
            (&m.secondary_request, 0.9, 1057.0),
            (&m.primary_reply, 0.5, 2092.0),
            (&m.primary_reply, 0.99, 273_741.0),
            (&m.secondary_reply, 0.5, 1981.0),
            (&m.secondary_reply, 0.9, 16_857.0),
            (&m.think_time, 0.1, 2.35),
            (&m.think_time, 0.5, 15.32),
            (&m.think_time, 0.9, 530.06),
            (&m.think_time, 0.99, 51_808.6),
        ];
        for (t, q, want) in cases {
            let got = t.quantile(q);
            assert!((got / want - 1.0).abs() < 0.005, "q{q}: {got} vs {want}");
        }
        // Means of the interpolated distributions [model-facts §8.1]: 395, 334, ≈15 100,
        // ≈6 830 bytes, ≈1 280 s.
        assert!((m.primary_request.mean() - 395.0).abs() < 2.0);
        assert!((m.secondary_request.mean() - 334.0).abs() < 2.0);
        assert!((m.primary_reply.mean() / 15_100.0 - 1.0).abs() < 0.02);
        assert!((m.secondary_reply.mean() / 6_830.0 - 1.0).abs() < 0.01);
        assert!((m.think_time.mean() / 1_280.0 - 1.0).abs() < 0.01);
    }

    #[test]
    fn every_continuous_table_passes_ks() {
        let m = MahModel::shared();
        let mut r = Rng::stream(21, StreamKind::Test, 0);
        for (name, t) in [
            ("primary_request", &m.primary_request),
            ("secondary_request", &m.secondary_request),
            ("primary_reply", &m.primary_reply),
            ("secondary_reply", &m.secondary_reply),
            ("think_time", &m.think_time),
        ] {
            // Sample the continuous inverse (before rounding) against the exact CDF.
            let xs: Vec<f64> = (0..20_000).map(|_| t.inverse_cdf(r.uniform())).collect();
            assert_ks(&xs, |x| t.cdf(x), name);
        }
    }

    #[test]
    fn counts_match_their_tables() {
        // P(files = 1) = 0.4864 and P(docs = 1) = 0.3557 (first points); mean files ≈ 2.90.
        // n = 40 000: sd of a share ≤ 0.0025, of the mean files ≈ 0.021; allow 5 sd.
        let m = MahModel::shared();
        let mut r = Rng::stream(22, StreamKind::Test, 0);
        let n = 40_000;
        let files: Vec<u32> = (0..n)
            .map(|_| m.sample_files_per_document(&mut r))
            .collect();
        let docs: Vec<u32> = (0..n).map(|_| m.sample_consecutive_docs(&mut r)).collect();
        let share = |v: &[u32], k: u32| v.iter().filter(|&&x| x == k).count() as f64 / n as f64;
        assert!(
            (share(&files, 1) - 0.4864).abs() < 0.0125,
            "{}",
            share(&files, 1)
        );
        assert!(
            (share(&docs, 1) - 0.3557).abs() < 0.0125,
            "{}",
            share(&docs, 1)
        );
        assert!((share(&files, 2) - (0.6916 - 0.4864)).abs() < 0.0125);
        let mean = files.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
        assert!((mean - 2.90).abs() < 0.11, "mean files {mean}");
        assert!(files.iter().all(|&x| (1..=65).contains(&x)));
        assert!(docs.iter().all(|&x| (1..=37).contains(&x)));
        // Byte sizes are integers within the table range.
        let b = m.sample_primary_reply(&mut r);
        assert!(b <= 8_146_976);
    }

    /// GloMoSim's threshold rule (think > T → think mod T) applied to draws from Mah's table:
    /// the draws follow the exact wrapped law (KS), whose mean is far below Mah's 1,287 s
    /// (T = 120 s, GloMoSim's documented example: a mean of 26.6 s).
    #[test]
    fn wrapped_think_times_follow_the_folded_law() {
        use crate::workload::dist::PiecewiseLaw;
        let m = MahModel::shared();
        for t in [120.0, 900.0] {
            let law = PiecewiseLaw::from_cdf(&m.think_time).wrapped(t);
            let mut r = Rng::stream(31, StreamKind::Test, t as u64);
            let xs: Vec<f64> = (0..20_000)
                .map(|_| {
                    let x = m.sample_think_time(&mut r);
                    if x > t {
                        x % t
                    } else {
                        x
                    }
                })
                .collect();
            assert!(xs.iter().all(|&x| x <= t));
            assert_ks(&xs, |x| law.cdf(x), "wrapped think time");
            let mean = xs.iter().sum::<f64>() / xs.len() as f64;
            assert!(
                (mean - law.mean()).abs() < 0.05 * law.mean(),
                "{mean} vs {}",
                law.mean()
            );
        }
        let law = PiecewiseLaw::from_cdf(&m.think_time).wrapped(120.0);
        assert!((law.mean() - 26.6).abs() < 0.1, "{}", law.mean());
        // The 18 % above the threshold fold down onto [0, 120): the median drops below Mah's.
        let mah_median = PiecewiseLaw::from_cdf(&m.think_time).quantile(0.5);
        assert!((mah_median - 15.32).abs() < 0.01, "{mah_median}");
        assert!(
            law.quantile(0.5) < mah_median - 1.0,
            "{}",
            law.quantile(0.5)
        );
    }
}
