//! dash.js's bitrate choice as pure functions of what the player has measured: the throughput
//! estimator, the ThroughputRule and BOLA, and the dynamic strategy that switches between
//! them. Read from dash.js v4.7.4 (github.com/Dash-Industry-Forum/dash.js, tag v4.7.4):
//!
//! - `src/streaming/rules/ThroughputHistory.js`: per segment a throughput sample
//!   `8 · bytes / download_ms` kb/s (download time from the first byte to the last:
//!   `useDeadTimeLatency = true`) and a latency sample (request to first byte, ms); at most 20
//!   kept. The default average (`movingAverageMethod = slidingWindow`) is the mean of the last
//!   4 throughput samples (VOD), widened by one for each of the last consecutive ratios
//!   ≥ 1.3 or ≤ 1/1.3; latency: the mean of the last 4. The EWMA alternative keeps a fast and a
//!   slow estimate (half-lives 3 s and 8 s of download time; latency 1 and 2 samples), each
//!   corrected for its start-up bias by `1 − 0.5^(weight/half-life)`; throughput takes the
//!   lower, latency the higher. A sample whose download took under 50 ms
//!   (`cacheLoadThresholds.video`) counts as a cache hit: ignored once real samples exist.
//!   The safe throughput is the average × `bandwidthSafetyFactor` (0.9).
//! - `src/streaming/controllers/AbrController.js` `getQualityForBitrate`: with latency `L`
//!   and segment duration `d`, `L > d` gives quality 0, else the bitrate is scaled by
//!   `1 − L/d`; the choice is the highest rung whose bitrate ≤ it (none: 0). The first segment
//!   uses `DEFAULT_VIDEO_BITRATE` = 1000 kb/s without latency. `_updateDynamicAbrStrategy`:
//!   BOLA once a buffer level seen (at every BUFFER_LEVEL metric, `_onMetricAdded`) exceeds
//!   `stableBufferTime`, back to throughput once one falls below half of it.
//! - `src/streaming/rules/abr/ThroughputRule.js`: the quality for the safe throughput.
//! - `src/streaming/rules/abr/InsufficientBufferRule.js` (on by default,
//!   `additionalAbrRules.insufficientBufferRule`): from the third segment on, at most the rung
//!   for average throughput × buffer/segment × 0.5 (rung 0 while the buffer is empty).
//!   `ABRRulesCollection.js` takes the lowest proposal of the rules in force.
//! - `src/streaming/rules/abr/BolaRule.js` (Spiteri, Urgaonkar, Sitaraman, "BOLA:
//!   Near-optimal bitrate adaptation for online videos", INFOCOM 2016, arXiv:1601.06748):
//!   utilities `u_m = ln(S_m) − ln(S_1) + 1`; buffer time
//!   `B = max(stableBufferTime, 10 + 2·M)`; `gp = (u_M − 1) / (B/10 − 1)`, `Vp = 10 / gp`; the
//!   quality maximises `(Vp·(u_m + gp) − Q) / S_m` (ties: the higher). Start-up state: the
//!   throughput rule's choice, with the placeholder buffer set so that BOLA would choose it,
//!   until the buffer holds a segment's duration. Steady state: the placeholder grows by the
//!   time since the last download ended (or since the last call), the choice uses buffer +
//!   placeholder, BOLA-O keeps an increase to at most `max(last, throughput choice)`, and a
//!   buffer above `Vp·(u_q + gp)` first consumes the placeholder, then delays the request
//!   (not at the top quality). After each download the placeholder decays by 0.99 and is
//!   capped at `Vp·(u_last + gp)` minus the buffer at that request; it is emptied when the
//!   buffer runs low (BUFFER_EMPTY).

use std::collections::VecDeque;

use crate::config::dash::{DashAbr, DashAverage};

/// ThroughputHistory.js constants.
const MAX_MEASUREMENTS: usize = 20;
const SAMPLE_AMOUNT_VOD: usize = 4;
const LATENCY_SAMPLE_AMOUNT: usize = 4;
const THROUGHPUT_SCALE: f64 = 1.3;
const EWMA_TPUT_HALF_LIFE_S: [f64; 2] = [3.0, 8.0];
const EWMA_LATENCY_HALF_LIFE: [f64; 2] = [1.0, 2.0];
/// `cacheLoadThresholds.video`, ms.
const CACHE_THRESHOLD_MS: f64 = 50.0;
/// BolaRule.js constants.
const MINIMUM_BUFFER_S: f64 = 10.0;
const MINIMUM_BUFFER_PER_LEVEL_S: f64 = 2.0;
const PLACEHOLDER_DECAY: f64 = 0.99;
/// InsufficientBufferRule.js constants.
const INSUFFICIENT_BUFFER_SAFETY_FACTOR: f64 = 0.5;
const SEGMENT_IGNORE_COUNT: u32 = 2;

/// Fast and slow EWMA with their total weight (`updateEwmaEstimate`).
#[derive(Clone, Debug, Default)]
struct Ewma {
    est: [f64; 2],
    weight: f64,
}

impl Ewma {
    fn push(&mut self, value: f64, weight: f64, half_life: [f64; 2]) {
        for (e, h) in self.est.iter_mut().zip(half_life) {
            let alpha = 0.5f64.powf(weight / h);
            *e = (1.0 - alpha) * value + alpha * *e;
        }
        self.weight += weight;
    }

    /// Bias-corrected estimates (`getAverageEwma`); `None` before any sample.
    fn corrected(&self, half_life: [f64; 2]) -> Option<[f64; 2]> {
        (self.weight > 0.0)
            .then(|| [0, 1].map(|k| self.est[k] / (1.0 - 0.5f64.powf(self.weight / half_life[k]))))
    }
}

/// The samples of one player (ThroughputHistory.js for its video track).
#[derive(Clone, Debug, Default)]
pub struct ThroughputHistory {
    tput_kbps: VecDeque<f64>,
    latency_ms: VecDeque<f64>,
    has_cached: bool,
    ewma_tput: Ewma,
    ewma_latency: Ewma,
}

impl ThroughputHistory {
    /// A segment of `bytes` whose first byte came `latency_ms` after its request and whose
    /// last came `download_ms` after its first.
    pub fn push(&mut self, bytes: u64, latency_ms: f64, download_ms: f64) {
        let latency_ms = if latency_ms > 0.0 { latency_ms } else { 1.0 };
        let download_ms = if download_ms > 0.0 { download_ms } else { 1.0 };
        let tput = (8.0 * bytes as f64 / download_ms).round();
        if download_ms < CACHE_THRESHOLD_MS {
            if !self.tput_kbps.is_empty() && !self.has_cached {
                return; // real samples exist: a cached load would skew them
            }
            self.has_cached = true;
        } else if self.has_cached {
            *self = ThroughputHistory::default();
        }
        for (q, v) in [
            (&mut self.tput_kbps, tput),
            (&mut self.latency_ms, latency_ms),
        ] {
            q.push_back(v);
            if q.len() > MAX_MEASUREMENTS {
                q.pop_front();
            }
        }
        self.ewma_tput
            .push(tput, 0.001 * download_ms, EWMA_TPUT_HALF_LIFE_S);
        self.ewma_latency
            .push(latency_ms, 1.0, EWMA_LATENCY_HALF_LIFE);
    }

    /// `getSampleSize` for throughput (VOD): 4, plus one per large ratio among the last ones.
    fn sample_size(&self) -> usize {
        let arr = &self.tput_kbps;
        let mut n = SAMPLE_AMOUNT_VOD;
        if n >= arr.len() {
            return arr.len();
        }
        for i in 1..SAMPLE_AMOUNT_VOD {
            let ratio = arr[arr.len() - i] / arr[arr.len() - i - 1];
            if ratio >= THROUGHPUT_SCALE || ratio <= 1.0 / THROUGHPUT_SCALE {
                n += 1;
                if n == arr.len() {
                    break;
                }
            }
        }
        n
    }

    /// The average throughput, kb/s (`None` before any sample).
    pub fn average_kbps(&self, method: DashAverage) -> Option<f64> {
        match method {
            DashAverage::SlidingWindow => {
                let n = self.sample_size();
                (n > 0).then(|| mean_of_last(&self.tput_kbps, n))
            },
            DashAverage::Ewma => self
                .ewma_tput
                .corrected(EWMA_TPUT_HALF_LIFE_S)
                .map(|[f, s]| f.min(s)),
        }
    }

    /// The average latency, ms (`None` before any sample).
    pub fn latency_ms(&self, method: DashAverage) -> Option<f64> {
        match method {
            DashAverage::SlidingWindow => {
                let n = LATENCY_SAMPLE_AMOUNT.min(self.latency_ms.len());
                (n > 0).then(|| mean_of_last(&self.latency_ms, n))
            },
            DashAverage::Ewma => self
                .ewma_latency
                .corrected(EWMA_LATENCY_HALF_LIFE)
                .map(|[f, s]| f.max(s)),
        }
    }
}

fn mean_of_last(q: &VecDeque<f64>, n: usize) -> f64 {
    q.iter().skip(q.len() - n).sum::<f64>() / n as f64
}

/// AbrController's `getQualityForBitrate`: the highest rung of `ladder_kbps` at or below
/// `kbps`, after scaling it by `1 − latency/segment` (a latency above the segment: 0).
pub fn quality_for_bitrate(
    ladder_kbps: &[f64],
    kbps: f64,
    latency_ms: Option<f64>,
    segment_s: f64,
) -> usize {
    let mut kbps = kbps;
    if let Some(l) = latency_ms.filter(|&l| l > 0.0) {
        let l = l / 1000.0;
        if l > segment_s {
            return 0;
        }
        kbps *= 1.0 - l / segment_s;
    }
    (0..ladder_kbps.len())
        .rev()
        .find(|&i| kbps * 1000.0 >= ladder_kbps[i] * 1000.0)
        .unwrap_or(0)
}

/// BOLA's parameters for a ladder (`calculateBolaParameters`); `None` with one rung.
#[derive(Clone, Debug, PartialEq)]
pub struct BolaParams {
    pub utilities: Vec<f64>,
    pub vp: f64,
    pub gp: f64,
}

impl BolaParams {
    pub fn new(ladder_kbps: &[f64], stable_buffer_s: f64) -> Option<Self> {
        let u0 = ladder_kbps[0].ln();
        let utilities: Vec<f64> = ladder_kbps.iter().map(|b| b.ln() - u0 + 1.0).collect();
        let top = utilities.len() - 1;
        if top == 0 {
            return None;
        }
        let buffer_time = stable_buffer_s
            .max(MINIMUM_BUFFER_S + MINIMUM_BUFFER_PER_LEVEL_S * ladder_kbps.len() as f64);
        let gp = (utilities[top] - 1.0) / (buffer_time / MINIMUM_BUFFER_S - 1.0);
        Some(BolaParams {
            utilities,
            vp: MINIMUM_BUFFER_S / gp,
            gp,
        })
    }

    /// `getQualityFromBufferLevel`: the rung maximising `(Vp·(u + gp) − level) / S`.
    pub fn quality_for_level(&self, ladder_kbps: &[f64], level: f64) -> usize {
        let mut best = (0, f64::NAN);
        for (i, (u, s)) in self.utilities.iter().zip(ladder_kbps).enumerate() {
            let score = (self.vp * (u + self.gp) - level) / s;
            if best.1.is_nan() || score >= best.1 {
                best = (i, score);
            }
        }
        best.0
    }

    /// `maxBufferLevelForQuality`.
    pub fn max_level(&self, q: usize) -> f64 {
        self.vp * (self.utilities[q] + self.gp)
    }

    /// `minBufferLevelForQuality`.
    pub fn min_level(&self, ladder_kbps: &[f64], q: usize) -> f64 {
        let (qb, qu) = (ladder_kbps[q], self.utilities[q]);
        (0..q)
            .filter(|&i| self.utilities[i] < qu)
            .map(|i| {
                let (ib, iu) = (ladder_kbps[i], self.utilities[i]);
                self.vp * (self.gp + (qb * iu - ib * qu) / (qb - ib))
            })
            .fold(0.0, f64::max)
    }
}

/// BolaRule.js's state for one player.
#[derive(Clone, Debug)]
pub struct Bola {
    params: BolaParams,
    steady: bool,
    placeholder: f64,
    last_quality: usize,
    last_segment_s: Option<f64>,
    /// The last download's request and end (s), until a call has used them.
    last_request: Option<f64>,
    last_finish: Option<f64>,
    last_call: Option<f64>,
}

/// What the rules decided for the next segment: its quality and how long to wait first.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decision {
    pub quality: usize,
    pub delay_s: f64,
}

/// What the rules see at a decision.
#[derive(Clone, Copy, Debug)]
pub struct Inputs<'a> {
    pub ladder_kbps: &'a [f64],
    pub segment_s: f64,
    pub now_s: f64,
    pub level_s: f64,
    pub current: usize,
    /// Average and safe throughput (kb/s) and average latency (ms), if measured.
    pub throughput_kbps: Option<f64>,
    pub safety_factor: f64,
    pub latency_ms: Option<f64>,
    /// The buffer state is BUFFER_EMPTY (below the stall threshold while playing).
    pub buffer_empty: bool,
}

impl Inputs<'_> {
    fn throughput_quality(&self) -> Option<usize> {
        self.throughput_kbps.map(|t| {
            quality_for_bitrate(
                self.ladder_kbps,
                t * self.safety_factor,
                self.latency_ms,
                self.segment_s,
            )
        })
    }
}

impl Bola {
    pub fn new(params: BolaParams) -> Self {
        Bola {
            params,
            steady: false,
            placeholder: 0.0,
            last_quality: 0,
            last_segment_s: None,
            last_request: None,
            last_finish: None,
            last_call: None,
        }
    }

    #[cfg(test)]
    pub fn placeholder_s(&self) -> f64 {
        self.placeholder
    }

    /// A segment of quality `q` and duration `d` arrived at `finish_s`, requested at
    /// `request_s`, the buffer then being `level_s` (`onMediaFragmentLoaded`,
    /// `onMetricAdded`, `checkNewSegment`).
    pub fn on_segment(&mut self, q: usize, d: f64, request_s: f64, finish_s: f64, level_s: f64) {
        self.last_quality = q;
        self.last_segment_s = Some(d);
        self.last_request = Some(request_s);
        self.last_finish = Some(finish_s);
        self.placeholder *= PLACEHOLDER_DECAY;
        let at_request = level_s + (finish_s - request_s);
        let cap = (self.params.max_level(q) - at_request).max(0.0);
        self.placeholder = self.placeholder.min(cap);
    }

    /// The buffer ran low (`onBufferEmpty`): the placeholder must not inflate the choice.
    pub fn on_buffer_empty(&mut self) {
        if self.steady {
            self.placeholder = 0.0;
        }
    }

    /// `getMaxIndex`: `None` = no change (nothing measured yet).
    pub fn decide(&mut self, x: &Inputs) -> Option<Decision> {
        let tq = x.throughput_quality()?;
        let p = &self.params;
        if !self.steady {
            self.placeholder = (p.min_level(x.ladder_kbps, tq) - x.level_s).max(0.0);
            self.last_quality = tq;
            if self.last_segment_s.is_some_and(|d| x.level_s >= d) {
                self.steady = true;
            }
            return Some(Decision {
                quality: tq,
                delay_s: 0.0,
            });
        }
        // updatePlaceholderBuffer
        if let Some(f) = self.last_finish {
            self.placeholder += (x.now_s - f).max(0.0);
        } else if let Some(c) = self.last_call {
            self.placeholder += (x.now_s - c).max(0.0);
        }
        self.last_call = Some(x.now_s);
        self.last_request = None;
        self.last_finish = None;
        let mut q = p.quality_for_level(x.ladder_kbps, x.level_s + self.placeholder);
        // BOLA-O: never increase to a rung the throughput cannot sustain.
        if q > self.last_quality && q > tq {
            q = tq.max(self.last_quality);
        }
        let mut delay = (x.level_s + self.placeholder - p.max_level(q)).max(0.0);
        if delay <= self.placeholder {
            self.placeholder -= delay;
            delay = 0.0;
        } else {
            delay -= self.placeholder;
            self.placeholder = 0.0;
            if q + 1 >= x.ladder_kbps.len() {
                delay = 0.0; // at the top the schedule controller decides
            }
        }
        self.last_quality = q;
        Some(Decision {
            quality: q,
            delay_s: delay,
        })
    }
}

/// The player's ABR: the rule(s) of its strategy and their state.
#[derive(Clone, Debug)]
pub struct Abr {
    strategy: DashAbr,
    /// BOLA's parameters (`None`: one rung, BOLA never changes anything).
    params: Option<BolaParams>,
    /// BOLA's state, made at its first call as BolaRule.js makes it (`getBolaState`): the
    /// segments before that are not its business.
    bola: Option<Bola>,
    /// Dynamic strategy: BOLA in use.
    using_bola: bool,
    stable_buffer_s: f64,
    /// InsufficientBufferRule (`None`: off): segments still to append before it speaks.
    insufficient_ignore: Option<u32>,
}

impl Abr {
    /// The ABR of `strategy` on `ladder_kbps`; with `insufficient_buffer`, dash.js's
    /// InsufficientBufferRule caps the choice too (`additionalAbrRules.insufficientBufferRule`).
    pub fn new(
        strategy: DashAbr,
        ladder_kbps: &[f64],
        stable_buffer_s: f64,
        insufficient_buffer: bool,
    ) -> Self {
        Abr {
            strategy,
            params: BolaParams::new(ladder_kbps, stable_buffer_s),
            bola: None,
            using_bola: strategy == DashAbr::Bola,
            stable_buffer_s,
            insufficient_ignore: insufficient_buffer.then_some(SEGMENT_IGNORE_COUNT),
        }
    }

    pub fn on_segment(&mut self, q: usize, d: f64, request_s: f64, finish_s: f64, level_s: f64) {
        if let Some(b) = self.bola.as_mut() {
            b.on_segment(q, d, request_s, finish_s, level_s);
        }
        // `_onBytesAppended`
        if let Some(n) = self.insufficient_ignore.as_mut() {
            *n = n.saturating_sub(1);
        }
    }

    /// InsufficientBufferRule.js's `getMaxIndex`: silent for the first two segments; rung 0
    /// while the buffer is empty; else the rung for the (unsafe) average throughput × buffer /
    /// segment × 0.5, so that a whole segment arrives before the buffer runs out.
    fn insufficient_buffer_cap(&self, x: &Inputs) -> Option<usize> {
        if self.insufficient_ignore != Some(0) {
            return None;
        }
        if x.buffer_empty {
            return Some(0);
        }
        // No throughput: dash.js computes NaN, which no rung satisfies (rung 0).
        let kbps = x.throughput_kbps.unwrap_or(f64::NAN)
            * (x.level_s / x.segment_s)
            * INSUFFICIENT_BUFFER_SAFETY_FACTOR;
        Some(quality_for_bitrate(
            x.ladder_kbps,
            kbps,
            x.latency_ms,
            x.segment_s,
        ))
    }

    pub fn on_buffer_empty(&mut self) {
        if let Some(b) = self.bola.as_mut() {
            b.on_buffer_empty();
        }
    }

    /// The dynamic strategy sees a buffer level (`_onMetricAdded` → `_updateAbrStrategy`, at
    /// every BUFFER_LEVEL metric: dash.js adds one as the buffer changes, so the player calls
    /// this with the level before and after each append and at each decision, the instants
    /// at which the level can cross a threshold).
    pub fn see_level(&mut self, level_s: f64) {
        if self.strategy == DashAbr::Dynamic {
            let threshold = if self.using_bola {
                0.5 * self.stable_buffer_s
            } else {
                self.stable_buffer_s
            };
            self.using_bola = level_s > threshold;
        }
    }

    /// The next segment's quality and delay (no change: the current quality, no delay).
    pub fn decide(&mut self, x: &Inputs) -> Decision {
        self.see_level(x.level_s);
        let keep = Decision {
            quality: x.current,
            delay_s: 0.0,
        };
        let main = if self.using_bola {
            match &self.params {
                Some(params) => self
                    .bola
                    .get_or_insert_with(|| Bola::new(params.clone()))
                    .decide(x),
                None => None,
            }
        } else {
            x.throughput_quality().map(|q| Decision {
                quality: q,
                delay_s: 0.0,
            })
        };
        // ABRRulesCollection `getMinSwitchRequest`: the lowest of the rules' proposals (all
        // of default priority); none: no change. BOLA's delay stands whatever the rung.
        match (main, self.insufficient_buffer_cap(x)) {
            (Some(d), Some(cap)) => Decision {
                quality: d.quality.min(cap),
                delay_s: d.delay_s,
            },
            (Some(d), None) => d,
            (None, Some(cap)) => Decision {
                quality: cap,
                delay_s: 0.0,
            },
            (None, None) => keep,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LADDER: [f64; 3] = [1000.0, 2000.0, 4000.0];

    fn close(a: f64, b: f64, tol: f64) {
        assert!((a - b).abs() <= tol, "{a} vs {b}");
    }

    /// Utilities 1, 1 + ln 2, 1 + ln 4; buffer time max(12, 10 + 2·3) = 16 s;
    /// gp = ln 4 / (16/10 − 1) = ln 4 / 0.6 = 2.310491; Vp = 10 / gp = 3 / ln 2 = 4.328085.
    /// So Vp·(u_m + gp) = 10 + Vp·u_m = A, A + 3, A + 6 with A = 10 + 3/ln 2 = 14.328085
    /// (Vp·ln 2 = 3): BOLA prefers rung 0 below A − 3 = 11.328085, rung 1 up to A, rung 2 above.
    #[test]
    fn bola_parameters_and_thresholds_by_hand() {
        let p = BolaParams::new(&LADDER, 12.0).unwrap();
        close(p.utilities[1], 1.0 + 2f64.ln(), 1e-12);
        close(p.gp, 4f64.ln() / 0.6, 1e-12);
        close(p.vp, 3.0 / 2f64.ln(), 1e-12);
        let a = 10.0 + 3.0 / 2f64.ln();
        for (q, want) in [(0, a), (1, a + 3.0), (2, a + 6.0)] {
            close(p.max_level(q), want, 1e-9);
        }
        // At the minimum buffer (10 s) the lowest rung; at the buffer time (16 s) the top.
        close(p.max_level(0) - p.vp, 10.0, 1e-9);
        close(p.max_level(2) - p.vp, 16.0, 1e-9);
        close(p.min_level(&LADDER, 1), a - 3.0, 1e-9);
        for (level, q) in [
            (5.0, 0),
            (11.2, 0),
            (11.5, 1),
            (14.2, 1),
            (14.5, 2),
            (30.0, 2),
        ] {
            assert_eq!(p.quality_for_level(&LADDER, level), q, "level {level}");
        }
        // One rung: BOLA has nothing to choose.
        assert!(BolaParams::new(&[500.0], 12.0).is_none());
    }

    fn inputs(now_s: f64, level_s: f64, current: usize, tput: Option<f64>) -> Inputs<'static> {
        Inputs {
            ladder_kbps: &LADDER,
            segment_s: 4.0,
            now_s,
            level_s,
            current,
            throughput_kbps: tput,
            safety_factor: 0.9,
            latency_ms: None,
            buffer_empty: false,
        }
    }

    /// A BOLA session step by step (the values in the comments are BolaRule.js's equations
    /// with the parameters of the test above).
    #[test]
    fn bola_decision_sequence_by_hand() {
        let mut abr = Abr::new(DashAbr::Bola, &LADDER, 12.0, false);
        // Nothing measured: no change (the current rung), but BOLA's state now exists.
        let d = abr.decide(&inputs(0.0, 0.0, 0, None));
        assert_eq!((d.quality, d.delay_s), (0, 0.0));
        // Segment 0 (rung 0, 4 s) requested at 0, in at 1.0 with the buffer empty.
        abr.on_segment(0, 4.0, 0.0, 1.0, 0.0);
        // Start-up: 3000 kb/s × 0.9 = 2700 → rung 1; placeholder = min_level(1) − 4 =
        // 11.328085 − 4 = 7.328085; the buffer (4) holds a segment: steady from now on.
        let d = abr.decide(&inputs(1.0, 4.0, 0, Some(3000.0)));
        assert_eq!((d.quality, d.delay_s), (1, 0.0));
        let b = abr.bola.as_ref().unwrap();
        close(b.placeholder_s(), 10.0 + 3.0 / 2f64.ln() - 3.0 - 4.0, 1e-9);
        assert!(b.steady);
        // Segment 1 (rung 1) requested at 1.0, in at 3.0, the buffer then 2 s: the
        // placeholder decays (× 0.99 = 7.254804); its cap, max_level(1) − (2 + 2) = 13.33,
        // does not bind.
        abr.on_segment(1, 4.0, 1.0, 3.0, 2.0);
        let ph = 0.99 * (10.0 + 3.0 / 2f64.ln() - 7.0);
        close(abr.bola.as_ref().unwrap().placeholder_s(), ph, 1e-9);
        // Decided at once (3.0): no delay to add; buffer 6 + placeholder 7.254804 =
        // 13.254804, between 11.33 and 14.33 → rung 1, no delay (below max_level(1) = 17.33).
        let d = abr.decide(&inputs(3.0, 6.0, 1, Some(3000.0)));
        assert_eq!((d.quality, d.delay_s), (1, 0.0));
        close(abr.bola.as_ref().unwrap().placeholder_s(), ph, 1e-9);
        // Segment 2 (rung 1) requested at 3.0, in at 5.0 with 4 s buffered: decay to
        // 0.99·ph = 7.182256 (cap 17.33 − 6 does not bind); decided 0.5 s later (5.5) with
        // 7.5 s buffered: the placeholder grows by 0.5 to 7.682256; 7.5 + 7.682256 =
        // 15.182256 > 14.33 → rung 2, which the throughput (5000 × 0.9 = 4500 → rung 2)
        // sustains, so BOLA-O lets it be.
        abr.on_segment(1, 4.0, 3.0, 5.0, 4.0);
        let d = abr.decide(&inputs(5.5, 7.5, 1, Some(5000.0)));
        assert_eq!((d.quality, d.delay_s), (2, 0.0));
        close(
            abr.bola.as_ref().unwrap().placeholder_s(),
            0.99 * ph + 0.5,
            1e-9,
        );
    }

    /// BOLA-O and the delay: steady at rung 1 with no placeholder, a 19 s buffer makes BOLA
    /// want rung 2 (19 > 14.33), but the throughput (1000 × 0.9 → rung 0) cannot sustain it:
    /// the choice stays at the last rung, 1. The buffer exceeds max_level(1) = 17.328085 by
    /// 1.671915 s: with no placeholder to absorb it, the request waits that long.
    #[test]
    fn bola_o_keeps_the_last_rung_and_delays_a_full_buffer() {
        let mut abr = Abr::new(DashAbr::Bola, &LADDER, 12.0, false);
        abr.decide(&inputs(0.0, 0.0, 0, None));
        abr.on_segment(1, 4.0, 0.0, 1.0, 0.0);
        // Start-up at a 12 s buffer: rung 1 (3000 × 0.9), placeholder max(0, 11.33 − 12) = 0.
        let d = abr.decide(&inputs(1.0, 12.0, 0, Some(3000.0)));
        assert_eq!(d.quality, 1);
        // 1.0 s → 1.0 s: nothing added to the placeholder.
        let d = abr.decide(&inputs(1.0, 19.0, 1, Some(1000.0)));
        assert_eq!(d.quality, 1);
        close(d.delay_s, 19.0 - (10.0 + 3.0 / 2f64.ln() + 3.0), 1e-9);
        // At the top rung no delay: the schedule controller's buffer target decides.
        let d = abr.decide(&inputs(1.0, 25.0, 1, Some(10_000.0)));
        assert_eq!((d.quality, d.delay_s), (2, 0.0));
    }

    /// The dynamic strategy: BOLA above the stable buffer time (12 s), throughput again below
    /// half of it (6 s); BOLA's state is made at its first call.
    #[test]
    fn dynamic_strategy_switches_with_hysteresis() {
        let mut abr = Abr::new(DashAbr::Dynamic, &LADDER, 12.0, false);
        abr.decide(&inputs(0.0, 11.0, 0, Some(3000.0)));
        assert!(!abr.using_bola && abr.bola.is_none());
        // A level seen above 12 s (after an append) turns BOLA on; a decision at 11 s keeps it.
        abr.see_level(12.5);
        abr.decide(&inputs(1.0, 11.0, 1, Some(3000.0)));
        assert!(abr.using_bola && abr.bola.is_some());
        abr.decide(&inputs(2.0, 6.5, 1, Some(3000.0)));
        assert!(abr.using_bola);
        abr.see_level(5.9);
        assert!(!abr.using_bola);
        abr.see_level(12.0);
        assert!(!abr.using_bola);
    }

    /// getQualityForBitrate: 3865 kb/s measured, × 0.9 = 3478.5, × (1 − 0.1/4) = 3391.5 →
    /// 3000 kb/s (rung 5 of the HLS ladder); a latency above the segment → rung 0.
    #[test]
    fn throughput_rule_by_hand() {
        let hls = crate::config::dash::HLS_LADDER_KBPS;
        assert_eq!(quality_for_bitrate(&hls, 0.9 * 3865.0, Some(100.0), 4.0), 5);
        assert_eq!(
            quality_for_bitrate(&hls, 0.9 * 3865.0, Some(4100.0), 4.0),
            0
        );
        // 4500 exactly is reached (≥), 4499 is not.
        assert_eq!(quality_for_bitrate(&hls, 4500.0, None, 4.0), 6);
        assert_eq!(quality_for_bitrate(&hls, 4499.0, None, 4.0), 5);
        // Below the lowest rung: rung 0.
        assert_eq!(quality_for_bitrate(&hls, 10.0, None, 4.0), 0);
        // The first segment: 1000 kb/s → 730 (rung 2).
        assert_eq!(quality_for_bitrate(&hls, 1000.0, None, 4.0), 2);
    }

    /// Pushes a sample of `kbps` downloaded in `ms` (bytes = kbps · ms / 8).
    fn push(h: &mut ThroughputHistory, kbps: f64, ms: f64) {
        h.push((kbps * ms / 8.0) as u64, 100.0, ms);
    }

    #[test]
    fn sliding_window_widens_when_samples_vary() {
        let mut h = ThroughputHistory::default();
        assert_eq!(h.average_kbps(DashAverage::SlidingWindow), None);
        // Ratios of the last ones 1.2, 1, 1: below 1.3, the window stays 4:
        // (1000 + 1000 + 1000 + 1200) / 4 = 1050.
        for k in [1100.0, 1000.0, 1000.0, 1000.0, 1200.0] {
            push(&mut h, k, 1000.0);
        }
        close(
            h.average_kbps(DashAverage::SlidingWindow).unwrap(),
            1050.0,
            1e-9,
        );
        // Then 2500: ratio 2500/1200 ≥ 1.3 widens to 5: (1000·3 + 1200 + 2500) / 5 = 1340.
        push(&mut h, 2500.0, 1000.0);
        close(
            h.average_kbps(DashAverage::SlidingWindow).unwrap(),
            1340.0,
            1e-9,
        );
        close(
            h.latency_ms(DashAverage::SlidingWindow).unwrap(),
            100.0,
            1e-9,
        );
        // At most 20 samples are kept.
        for _ in 0..30 {
            push(&mut h, 700.0, 1000.0);
        }
        assert_eq!(h.tput_kbps.len(), 20);
    }

    /// EWMA of 1000 then 2000 kb/s, 2 s each: fast α = 0.5^(2/3) = 0.629961, estimate
    /// 0.370039·2000 + α·370.039 = 973.189, corrected by 1 − 0.5^(4/3) = 0.603150 → 1613.52;
    /// slow α = 0.5^(2/8) = 0.840896: 451.997 / (1 − 0.5^(1/2)) = 1543.22; the lower: 1543.22.
    #[test]
    fn ewma_by_hand() {
        let mut h = ThroughputHistory::default();
        push(&mut h, 1000.0, 2000.0);
        close(h.average_kbps(DashAverage::Ewma).unwrap(), 1000.0, 1e-6);
        push(&mut h, 2000.0, 2000.0);
        close(h.average_kbps(DashAverage::Ewma).unwrap(), 1543.22, 0.01);
    }

    /// A download under 50 ms counts as a cache hit: used while nothing else is known, dropped
    /// (with its like) at the first real sample, ignored after that.
    #[test]
    fn cached_loads_do_not_skew_real_samples() {
        let mut h = ThroughputHistory::default();
        push(&mut h, 50_000.0, 20.0);
        close(
            h.average_kbps(DashAverage::SlidingWindow).unwrap(),
            50_000.0,
            1e-9,
        );
        push(&mut h, 1000.0, 1000.0);
        close(
            h.average_kbps(DashAverage::SlidingWindow).unwrap(),
            1000.0,
            1e-9,
        );
        push(&mut h, 80_000.0, 10.0);
        close(
            h.average_kbps(DashAverage::SlidingWindow).unwrap(),
            1000.0,
            1e-9,
        );
    }

    /// InsufficientBufferRule: silent until two segments are in; then with 4000 kb/s
    /// measured, a 2-s buffer and 4-s segments it allows 4000 · 2/4 · 0.5 = 1000 kb/s (rung
    /// 0) although the throughput rule wants 4000 · 0.9 = 3600 (rung 1): the lower wins. At
    /// 12 s it allows 6000 (rung 2) and the throughput rule's rung 1 stands; an empty buffer
    /// means rung 0.
    #[test]
    fn insufficient_buffer_rule_caps_by_hand() {
        let mut abr = Abr::new(DashAbr::Throughput, &LADDER, 12.0, true);
        assert_eq!(abr.decide(&inputs(0.0, 2.0, 0, Some(4000.0))).quality, 1);
        abr.on_segment(0, 4.0, 0.0, 1.0, 0.0);
        assert_eq!(abr.decide(&inputs(1.0, 2.0, 0, Some(4000.0))).quality, 1);
        abr.on_segment(0, 4.0, 1.0, 2.0, 3.0);
        assert_eq!(abr.decide(&inputs(2.0, 2.0, 0, Some(4000.0))).quality, 0);
        assert_eq!(abr.decide(&inputs(2.0, 12.0, 0, Some(4000.0))).quality, 1);
        let empty = Inputs {
            buffer_empty: true,
            ..inputs(2.0, 0.1, 1, Some(4000.0))
        };
        assert_eq!(abr.decide(&empty).quality, 0);
    }
}
