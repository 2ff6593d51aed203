//! Bottleneck monitor, one per direction: counters per reporting interval, the queue sampled
//! every few milliseconds (Study A samples every 3 ms) and aggregated per window, and the
//! whole-run totals after the warm-up.

use serde::Serialize;

use super::records::{ArrivalRows, BottleneckRows, QueueDelayRows, QueueRows};
use crate::config::MeasureConfig;
use crate::measure::histogram::DelayHistogram;
use crate::net::link::Link;
use crate::net::queue::Queue;
use crate::units::{millis, secs, Time};

/// Post-warm-up totals of one bottleneck direction.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DirectionSummary {
    pub arrivals: u64,
    pub departures: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub drops_early: u64,
    pub drops_forced: u64,
    pub drops_overflow: u64,
    pub marks: u64,
    pub link_losses: u64,
    /// IP bits (packets' IP sizes) that finished transmission per second of measured time.
    pub throughput_mbps: f64,
    /// Fraction of measured time the transmitter was busy (exact, from transmission times):
    /// utilization on the wire, the link-layer framing included.
    pub utilization: f64,
    /// Bits on the wire per second of measured time (framing included): `utilization` × rate.
    pub throughput_wire_mbps: f64,
    /// IP bits sent as a fraction of the link's rate (`utilization` without framing).
    pub utilization_ip: f64,
    /// Queue drops / packets arriving at the queue.
    pub loss_rate: f64,
    pub mean_queue_pkts: f64,
    pub mean_queue_bytes: f64,
    pub max_queue_pkts: u64,
    pub queue_samples: u64,
    /// Queueing delay of departing packets (enqueue to start of transmission), ms: mean,
    /// median, 90th and 99th percentiles (exact to 0.1 ms) and maximum.
    pub delay_mean_ms: f64,
    pub delay_p50_ms: f64,
    pub delay_p90_ms: f64,
    pub delay_p99_ms: f64,
    pub delay_max_ms: f64,
    /// Histogram of runs of consecutive drops at the queue after the warm-up (the aggregate,
    /// whatever the flows), index = run length.
    pub drop_runs: Vec<u64>,
}

#[derive(Clone, Copy, Default)]
struct Snapshot {
    arrivals: u64,
    departures: u64,
    tx_packets: u64,
    tx_bytes: u64,
    drops_early: u64,
    drops_forced: u64,
    drops_overflow: u64,
    marks: u64,
    lost: u64,
    busy: Time,
    /// IP bytes on the wire by `at`, pro rata (`Link::bytes_sent_until`).
    sent: f64,
    at: Time,
}

impl Snapshot {
    fn of(link: &Link, at: Time) -> Self {
        let s = &link.queue.stats;
        Snapshot {
            arrivals: s.arrivals,
            departures: s.departures,
            tx_packets: link.tx_packets,
            tx_bytes: link.tx_bytes,
            drops_early: s.drops_early,
            drops_forced: s.drops_forced,
            drops_overflow: s.drops_overflow,
            marks: s.marks,
            lost: link.lost,
            busy: link.busy_until(at),
            sent: link.bytes_sent_until(at),
            at,
        }
    }
}

pub struct Monitor {
    name: &'static str,
    /// The hop, written in the rows' `hop` column in a chain (`None`: the dumbbell, whose
    /// tables have no such column).
    hop: Option<u32>,
    pub sample_period: Time,
    window: Time,
    pub interval: Time,
    // current queue window
    win_end: Time,
    n: u64,
    sum: f64,
    sumsq: f64,
    min: u64,
    max: u64,
    sum_bytes: f64,
    probe: f64,
    // interval bookkeeping
    last: Snapshot,
    // post-warm-up
    measuring: bool,
    base: Snapshot,
    base_delay: Option<DelayHistogram>,
    base_runs: Vec<u64>,
    m_n: u64,
    m_sum: f64,
    m_sum_bytes: f64,
    m_max: u64,
    pub summary: DirectionSummary,
    // arrival-count series (0 = off)
    burst_bin: Time,
    bin_start: Time,
    bin_packets: u64,
    bin_bytes: u64,
}

impl Monitor {
    pub fn new(name: &'static str, m: &MeasureConfig) -> Self {
        let window = millis(m.queue_window_ms);
        Monitor {
            name,
            hop: None,
            sample_period: millis(m.queue_sample_ms),
            window,
            interval: secs(m.interval_s),
            win_end: window,
            n: 0,
            sum: 0.0,
            sumsq: 0.0,
            min: u64::MAX,
            max: 0,
            sum_bytes: 0.0,
            probe: f64::NAN,
            last: Snapshot::default(),
            measuring: false,
            base: Snapshot::default(),
            base_delay: None,
            base_runs: Vec::new(),
            m_n: 0,
            m_sum: 0.0,
            m_sum_bytes: 0.0,
            m_max: 0,
            summary: DirectionSummary::default(),
            burst_bin: millis(m.burst_bin_ms),
            bin_start: 0,
            bin_packets: 0,
            bin_bytes: 0,
        }
    }

    /// The monitor of hop `hop` of the scenario's chain: its rows carry the hop when the
    /// scenario has hops after the first. The arrival series (`measure.burst_bin_ms`) is kept
    /// for hop 0 only: its table has no hop column.
    pub fn in_chain(mut self, sc: &crate::config::Scenario, hop: u32) -> Self {
        if !sc.topology.hops.is_empty() {
            self.hop = Some(hop);
        }
        if hop > 0 {
            self.burst_bin = 0;
        }
        self
    }

    /// A packet of `size` bytes arrives at the queue: counted in the current bin of the
    /// arrival series; bins that ended before `now` are written out, empty ones included.
    #[inline]
    pub fn arrival(&mut self, now: Time, size: u32, rows: &mut ArrivalRows) {
        if self.burst_bin == 0 {
            return;
        }
        self.flush_bins(now, rows);
        self.bin_packets += 1;
        self.bin_bytes += size as u64;
    }

    /// Writes every complete bin ending at or before `now`.
    fn flush_bins(&mut self, now: Time, rows: &mut ArrivalRows) {
        while now >= self.bin_start + self.burst_bin {
            rows.t_s.push(self.bin_start as f64 * 1e-9);
            rows.direction.push(self.name);
            rows.packets.push(self.bin_packets);
            rows.bytes.push(self.bin_bytes);
            self.bin_start += self.burst_bin;
            self.bin_packets = 0;
            self.bin_bytes = 0;
        }
    }

    /// Samples the instantaneous queue (packets waiting, not counting the one in service).
    pub fn sample(&mut self, now: Time, q: &Queue, rows: &mut QueueRows) {
        if now >= self.win_end && self.n > 0 {
            self.flush_window(rows);
        }
        while now >= self.win_end {
            self.win_end += self.window;
        }
        let len = q.len();
        let p = len.packets as u64;
        self.n += 1;
        self.sum += p as f64;
        self.sumsq += (p * p) as f64;
        self.min = self.min.min(p);
        self.max = self.max.max(p);
        self.sum_bytes += len.bytes as f64;
        self.probe = q.aqm.state_probe().map_or(f64::NAN, |(_, v)| v);
        if self.measuring {
            self.m_n += 1;
            self.m_sum += p as f64;
            self.m_sum_bytes += len.bytes as f64;
            self.m_max = self.m_max.max(p);
        }
    }

    fn flush_window(&mut self, rows: &mut QueueRows) {
        let n = self.n as f64;
        let mean = self.sum / n;
        rows.t_s.push(self.win_end as f64 * 1e-9);
        rows.direction.push(self.name);
        if let Some(h) = self.hop {
            rows.hop.push(h as u64);
        }
        rows.samples.push(self.n);
        rows.mean_pkts.push(mean);
        rows.var_pkts.push((self.sumsq / n - mean * mean).max(0.0));
        rows.min_pkts.push(self.min);
        rows.max_pkts.push(self.max);
        rows.mean_bytes.push(self.sum_bytes / n);
        rows.aqm_state.push(self.probe);
        self.n = 0;
        self.sum = 0.0;
        self.sumsq = 0.0;
        self.min = u64::MAX;
        self.max = 0;
        self.sum_bytes = 0.0;
    }

    /// Closes a reporting interval ending at `now`.
    pub fn interval(&mut self, now: Time, link: &Link, rows: &mut BottleneckRows) {
        let cur = Snapshot::of(link, now);
        let d = |a: u64, b: u64| a - b;
        let span = (now - self.last.at) as f64 * 1e-9;
        if span <= 0.0 {
            return;
        }
        let bytes = d(cur.tx_bytes, self.last.tx_bytes);
        rows.t_s.push(now as f64 * 1e-9);
        rows.direction.push(self.name);
        if let Some(h) = self.hop {
            rows.hop.push(h as u64);
        }
        rows.arrivals.push(d(cur.arrivals, self.last.arrivals));
        rows.departures
            .push(d(cur.departures, self.last.departures));
        rows.tx_bytes.push(bytes);
        rows.drops_early
            .push(d(cur.drops_early, self.last.drops_early));
        rows.drops_forced
            .push(d(cur.drops_forced, self.last.drops_forced));
        rows.drops_overflow
            .push(d(cur.drops_overflow, self.last.drops_overflow));
        rows.marks.push(d(cur.marks, self.last.marks));
        rows.link_losses.push(d(cur.lost, self.last.lost));
        let utilization = (cur.busy - self.last.busy) as f64 * 1e-9 / span;
        let rate = link.mean_mbps(self.last.at, now);
        let sent = cur.sent - self.last.sent;
        rows.throughput_mbps.push(sent * 8.0 / span / 1e6);
        rows.utilization.push(utilization);
        rows.throughput_wire_mbps.push(utilization * rate);
        rows.utilization_ip.push(sent * 8.0 / span / 1e6 / rate);
        self.last = cur;
    }

    pub fn start_measuring(&mut self, now: Time, link: &Link) {
        self.measuring = true;
        self.base = Snapshot::of(link, now);
        self.base_delay = link.queue.stats.sojourn.as_deref().cloned();
        self.base_runs = link.queue.stats.drop_runs.clone();
    }

    /// Queueing delays of the packets that departed after the warm-up.
    fn measured_delays(&self, link: &Link) -> Option<DelayHistogram> {
        let h = link.queue.stats.sojourn.as_deref()?;
        Some(match &self.base_delay {
            Some(b) => h.since(b),
            None => h.clone(),
        })
    }

    /// The post-warm-up queueing-delay distribution, one row per non-empty bin.
    pub fn write_delay_rows(&self, link: &Link, rows: &mut QueueDelayRows) {
        let Some(h) = self.measured_delays(link) else {
            return;
        };
        for (lo, width, count) in h.nonzero_bins() {
            rows.direction.push(self.name);
            if let Some(hop) = self.hop {
                rows.hop.push(hop as u64);
            }
            rows.delay_ms.push(lo as f64 * 1e-6);
            rows.width_ms
                .push(width.map_or(f64::INFINITY, |w| w as f64 * 1e-6));
            rows.count.push(count);
        }
    }

    /// End of run: the last partial interval and window, the complete arrival bins, and the
    /// summary.
    pub fn close(
        &mut self,
        now: Time,
        link: &Link,
        brows: &mut BottleneckRows,
        qrows: &mut QueueRows,
        arows: &mut ArrivalRows,
    ) {
        if self.burst_bin > 0 {
            self.flush_bins(now, arows);
        }
        if now > self.last.at {
            self.interval(now, link, brows);
        }
        if self.n > 0 {
            self.win_end = self.win_end.min(now);
            self.flush_window(qrows);
        }
        let cur = Snapshot::of(link, now);
        let b = self.base;
        let span = (now.saturating_sub(b.at)) as f64 * 1e-9;
        let delays = self.measured_delays(link);
        let s = &mut self.summary;
        s.arrivals = cur.arrivals - b.arrivals;
        s.departures = cur.departures - b.departures;
        s.tx_packets = cur.tx_packets - b.tx_packets;
        s.tx_bytes = cur.tx_bytes - b.tx_bytes;
        s.drops_early = cur.drops_early - b.drops_early;
        s.drops_forced = cur.drops_forced - b.drops_forced;
        s.drops_overflow = cur.drops_overflow - b.drops_overflow;
        s.marks = cur.marks - b.marks;
        s.link_losses = cur.lost - b.lost;
        if span > 0.0 {
            s.throughput_mbps = (cur.sent - b.sent) * 8.0 / span / 1e6;
            s.utilization = (cur.busy - b.busy) as f64 * 1e-9 / span;
            // The mean capacity of the period when the rate changed (`topology.bottleneck_steps`).
            let rate = link.mean_mbps(b.at, now);
            s.throughput_wire_mbps = s.utilization * rate;
            s.utilization_ip = s.throughput_mbps / rate;
        }
        // Drops of the period's own arrivals (`QueueStats::drops_of_earlier`): at most all of
        // them, so the rate is in [0, 1] even when a dequeue-time AQM drops packets that
        // arrived during the warm-up.
        let drops =
            s.drops_early + s.drops_forced + s.drops_overflow - link.queue.stats.drops_of_earlier;
        s.loss_rate = if s.arrivals > 0 {
            drops as f64 / s.arrivals as f64
        } else {
            0.0
        };
        if self.m_n > 0 {
            s.mean_queue_pkts = self.m_sum / self.m_n as f64;
            s.mean_queue_bytes = self.m_sum_bytes / self.m_n as f64;
        }
        s.max_queue_pkts = self.m_max;
        s.queue_samples = self.m_n;
        s.drop_runs = crate::measure::runs::since(&link.queue.stats.drop_runs, &self.base_runs);
        if let Some(h) = delays {
            let ms = |t: Time| t as f64 * 1e-6;
            s.delay_mean_ms = h.mean() * 1e-6;
            s.delay_p50_ms = ms(h.quantile(0.5));
            s.delay_p90_ms = ms(h.quantile(0.9));
            s.delay_p99_ms = ms(h.quantile(0.99));
            s.delay_max_ms = ms(h.max());
        }
    }
}
