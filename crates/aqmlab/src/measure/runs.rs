//! Histograms of run lengths (runs of consecutive losses): index = run length (index 0 unused),
//! the last bin collects runs of `MAX_RUN` or more. Bounded memory whatever the run.

/// Longest run length with its own bin.
pub const MAX_RUN: usize = 64;

/// Counts one run of `len` ≥ 1 losses (the histogram grows to its fixed size on first use).
#[inline]
pub fn count_run(hist: &mut Vec<u64>, len: u64) {
    debug_assert!(len > 0, "a run has at least one loss");
    let idx = (len as usize).min(MAX_RUN);
    if hist.len() <= idx {
        hist.resize(MAX_RUN + 1, 0);
    }
    hist[idx] += 1;
}

/// As `count_run`, growing the histogram only as far as the longest run so far (per-connection
/// histograms: most hold a few short runs). Same bins, so the same rows and totals.
#[inline]
pub fn count_run_compact(hist: &mut Vec<u64>, len: u64) {
    debug_assert!(len > 0, "a run has at least one loss");
    let idx = (len as usize).min(MAX_RUN);
    if hist.len() <= idx {
        hist.resize(idx + 1, 0);
    }
    hist[idx] += 1;
}

/// Adds histogram `from` into `into`.
pub fn merge(into: &mut Vec<u64>, from: &[u64]) {
    if into.len() < from.len() {
        into.resize(from.len(), 0);
    }
    for (a, b) in into.iter_mut().zip(from) {
        *a += b;
    }
}

/// Counts of `now` not already in `base` (a snapshot of the same histogram taken earlier).
pub fn since(now: &[u64], base: &[u64]) -> Vec<u64> {
    now.iter()
        .enumerate()
        .map(|(i, &c)| c - base.get(i).copied().unwrap_or(0))
        .collect()
}

/// Losses the runs add up to (a run in the last bin counts `MAX_RUN`, a lower bound).
pub fn losses(hist: &[u64]) -> u64 {
    hist.iter()
        .enumerate()
        .map(|(len, &c)| len as u64 * c)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_binned_by_length_and_capped() {
        let mut h = Vec::new();
        for len in [1, 1, 3, 200] {
            count_run(&mut h, len);
        }
        assert_eq!((h[1], h[3], h[MAX_RUN]), (2, 1, 1));
        assert_eq!(losses(&h), 2 + 3 + MAX_RUN as u64);
        let base = h.clone();
        count_run(&mut h, 2);
        assert_eq!(since(&h, &base).iter().sum::<u64>(), 1);
        let mut total = vec![0, 5];
        merge(&mut total, &h);
        assert_eq!((total[1], total[2]), (7, 1));
    }
}
