//! Record keeping: a connection's row, its exchanges' rows and the summary's counters when
//! it ends; the batches of records handed out (`drain`); the closing of the books at the end
//! of a run (`finish`); the run's totals (`Summary`) and the engine's counters
//! (`EngineStats`).

use serde::Serialize;

use super::app::App;
use super::monitor::DirectionSummary;
use super::udp_cbr::UdpSummary;
use super::Simulation;
use crate::measure::Table;
use crate::units::Time;

/// Engine counters, for progress displays and benchmarks.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EngineStats {
    pub events: u64,
    pub sim_time_s: f64,
    pub bottleneck_packets: u64,
    pub peak_packets_in_flight: u64,
    pub connections_opened: u64,
    pub active_connections: u64,
    /// Packets that reached their destination host, and those that arrived for a connection
    /// that had already ended.
    pub delivered_packets: u64,
    pub stale_packets: u64,
    /// Events waiting in the scheduler (including stale timer events not yet popped).
    pub pending_events: u64,
    /// Connection slots: the most connections open at once so far (slots are reused, never
    /// released), and the bytes they hold: each slot's connection and tag, and what its
    /// endpoints and application hold on the heap (`Simulation::connection_bytes`).
    pub connection_slots: u64,
    pub connection_bytes: u64,
}

/// Whole-run totals after the warm-up.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    pub measured_s: f64,
    /// The bottleneck disciplines and the parameters in force, per direction.
    pub queue_forward: serde_json::Value,
    pub queue_reverse: serde_json::Value,
    /// tc-style statistics per direction (`sim::qdisc::tc_stats`): tc's header (`sent_bytes`,
    /// `sent_packets`, `dropped`, `overlimits`, `requeues`, `backlog_bytes`,
    /// `backlog_packets`, `marks`), the completed transmissions (`tx_packets`, `tx_bytes`)
    /// and the discipline's own fields named as `tc -s qdisc show` names them
    /// (`Aqm::qdisc_stats`); from the start of the run, warm-up included, as tc counts.
    pub qdisc_forward: serde_json::Map<String, serde_json::Value>,
    pub qdisc_reverse: serde_json::Map<String, serde_json::Value>,
    pub forward: DirectionSummary,
    pub reverse: DirectionSummary,
    pub connections_started: u64,
    pub connections_completed: u64,
    pub connections_aborted: u64,
    pub connections_unfinished: u64,
    pub bytes_written: u64,
    pub bytes_delivered: u64,
    /// Request/response exchanges started after the warm-up: completed, and still open when
    /// the run (or their connection) ended.
    pub exchanges_completed: u64,
    pub exchanges_unfinished: u64,
    /// Aggregate TCP goodput: application bytes delivered in order (each byte once, however
    /// often it was sent) at times after the warm-up, every connection and both directions;
    /// and the same per bottleneck direction the bytes crossed, in Mb/s of measured time.
    pub tcp_goodput_bytes: u64,
    pub tcp_goodput_mbps: f64,
    pub tcp_goodput_forward_mbps: f64,
    pub tcp_goodput_reverse_mbps: f64,
    /// Runs of consecutive losses of each TCP connection's packets at the bottleneck queues
    /// (on arrival, after the warm-up), summed over the connections (index = run length).
    pub tcp_loss_runs: Vec<u64>,
    /// UDP CBR totals (all zero without `udp_cbr` sources).
    pub udp: UdpSummary,
    /// Page loads of `pages` sources (`sim::pages`); absent without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages: Option<super::pages::PageSummary>,
    /// DASH sessions' means (`sim::dash`; NaN, serialized as null, without sessions).
    pub dash: super::dash::DashSummary,
    /// Video calls (`kind = "video_call"`); absent without them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub video_call: Option<super::VideoCallSummary>,
    /// Real-time applications (`sim::realtime`): present only when the run has such flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub voice: Option<super::VoiceSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub game: Option<super::GameSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ping: Option<super::PingSummary>,
    /// A chain of bottlenecks: every hop, hop 0 (the fields above) included. Absent for the
    /// dumbbell.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hops: Vec<HopSummary>,
}

/// One hop of a chain after the warm-up: what `Summary` gives for the bottleneck.
#[derive(Clone, Debug, Default, Serialize)]
pub struct HopSummary {
    pub hop: u32,
    pub mbps: f64,
    pub delay_ms: f64,
    pub queue_forward: serde_json::Value,
    pub queue_reverse: serde_json::Value,
    pub qdisc_forward: serde_json::Map<String, serde_json::Value>,
    pub qdisc_reverse: serde_json::Map<String, serde_json::Value>,
    pub forward: DirectionSummary,
    pub reverse: DirectionSummary,
}

impl Simulation {
    /// Books a connection that ended (or is still open at the end of the run): the summary's
    /// counters, its loss runs, its exchanges, and its row when connections are kept
    /// (`measure.connections`: the row is not built at all otherwise).
    pub(super) fn record(&mut self, slot: u32, closed: Option<Time>) {
        let c = &self.conns[slot as usize];
        let completed = c.app.transfer_complete() && !c.aborted;
        if c.start >= self.warmup {
            let sm = &mut self.summary;
            if c.aborted {
                sm.connections_aborted += 1;
            } else if completed {
                sm.connections_completed += 1;
            } else if closed.is_none() {
                sm.connections_unfinished += 1;
            }
            sm.bytes_written += c.app.bytes_expected();
            sm.bytes_delivered += c.app.bytes_received();
        }
        if self.sc.measure.connections {
            self.record_connection(slot, closed, completed);
        }
        self.record_flow_losses(slot);
        self.record_exchanges(slot);
        if self.dash.is_some() {
            self.record_dash(slot);
        }
    }

    /// The connection's row, but for its bottleneck drops (`record_flow_losses`).
    fn record_connection(&mut self, slot: u32, closed: Option<Time>, completed: bool) {
        let c = &self.conns[slot as usize];
        let r = &mut self.conn_rows;
        let s = |t: Option<Time>| t.map_or(f64::NAN, |t| t as f64 * 1e-9);
        r.conn_id.push(c.id);
        r.source.push(c.source as u64);
        r.flow.push(c.identity);
        r.client_side
            .push(if c.client_left { "left" } else { "right" });
        r.client_host.push(c.client_host as u64);
        r.server_host.push(c.server_host as u64);
        r.base_rtt_ms.push(c.base_rtt as f64 * 1e-6);
        r.start_s.push(c.start as f64 * 1e-9);
        r.established_s.push(s(c.established));
        r.first_byte_s.push(s(c.first_byte));
        r.last_byte_s.push(s(c.last_byte));
        r.closed_s.push(s(closed));
        r.request_bytes.push(c.app.request_bytes());
        r.response_bytes.push(c.app.response_bytes());
        r.bytes_delivered.push(c.app.bytes_received());
        r.bytes_delivered_measured.push(c.delivered_measured);
        r.completed.push(completed);
        r.aborted.push(c.aborted);
        let (a, b) = (&c.ep[0].counters, &c.ep[1].counters);
        r.syn_retransmits
            .push(a.syn_retransmits as u64 + b.syn_retransmits as u64);
        r.fin_retransmits
            .push(a.fin_retransmits as u64 + b.fin_retransmits as u64);
        r.data_retransmits
            .push(a.data_retransmits + b.data_retransmits);
        r.timeouts.push(a.timeouts as u64 + b.timeouts as u64);
        r.fast_retransmits
            .push(a.fast_retransmits as u64 + b.fast_retransmits as u64);
        r.segments_sent.push(a.segments + b.segments);
        let m = [c.ep[0].min_rtt_sample, c.ep[1].min_rtt_sample]
            .into_iter()
            .filter(|&x| x > 0)
            .min();
        r.min_rtt_sample_ms
            .push(m.map_or(f64::NAN, |x| x as f64 * 1e-6));
        r.ecn.push(c.ep[0].ecn.ok && c.ep[1].ecn.ok);
        r.ecn_reductions
            .push(c.ep[0].ecn.reductions + c.ep[1].ecn.reductions);
        r.ce_received
            .push(c.ep[0].ecn.ce_received + c.ep[1].ecn.ce_received);
    }

    /// One row per exchange of a Web connection; an exchange without an end is unfinished.
    fn record_exchanges(&mut self, slot: u32) {
        let c = &self.conns[slot as usize];
        let App::Web(w) = &c.app else { return };
        let (a, b) = (&c.ep[0].counters, &c.ep[1].counters);
        let r = &mut self.exch_rows;
        let secs = |t: Option<Time>| t.map_or(f64::NAN, |t| t as f64 * 1e-9);
        let eof = secs(w.eof());
        for (i, e) in w.exchanges().iter().enumerate() {
            let (start, end) = (w.start(i), w.response_end(i));
            r.conn_id.push(c.id);
            r.source.push(c.source as u64);
            r.user.push(c.user.map_or(c.identity, |u| u as u64));
            r.index.push(i as u64);
            r.client_side
                .push(if c.client_left { "left" } else { "right" });
            r.persistent.push(w.persistent());
            r.start_s.push(secs(start));
            r.end_s.push(secs(w.end(i)));
            r.close_s.push(eof);
            r.response_time_s.push(match (start, end) {
                (Some(s), Some(e)) => (e - s) as f64 * 1e-9,
                _ => f64::NAN,
            });
            r.request_bytes.push(e.request);
            r.response_bytes.push(e.response);
            r.completed.push(end.is_some());
            r.base_rtt_ms.push(c.base_rtt as f64 * 1e-6);
            r.syn_retransmits
                .push(a.syn_retransmits as u64 + b.syn_retransmits as u64);
            r.fin_retransmits
                .push(a.fin_retransmits as u64 + b.fin_retransmits as u64);
            r.data_retransmits
                .push(a.data_retransmits + b.data_retransmits);
            r.timeouts.push(a.timeouts as u64 + b.timeouts as u64);
            // An exchange that never started (its connection failed first) starts at the
            // connection's start for the books.
            if start.unwrap_or(c.start) >= self.warmup {
                if end.is_some() {
                    self.summary.exchanges_completed += 1;
                } else {
                    self.summary.exchanges_unfinished += 1;
                }
            }
        }
    }

    /// Records produced since the last drain, one batch per table.
    pub fn drain(&mut self) -> Vec<Table> {
        let mut tables = vec![
            self.conn_rows.take(),
            self.exch_rows.take(),
            self.bneck_rows.take(),
            self.queue_rows.take(),
            self.arrival_rows.take(),
            self.udp_rows.take(),
            self.loss_run_rows.take(),
            self.queue_delay_rows.take(),
        ];
        if let Some(d) = self.source_delays.as_mut() {
            tables.push(self.source_delay_rows.take());
            tables.push(d.take_interval_rows());
        }
        if self.has_pages() {
            tables.push(self.page_rows.take());
        }
        if !self.video.is_empty() {
            tables.push(self.video_call_rows.take());
            tables.push(self.video_rate_rows.take());
        }
        if !self.rt.is_empty() {
            // Each kind's table only in runs that have the kind.
            let (v, g, p) = &mut *self.rt_rows;
            let [voice, game, ping] = self.rt.kinds();
            tables.extend(voice.then(|| v.take()));
            tables.extend(game.then(|| g.take()));
            tables.extend(ping.then(|| p.take()));
        }
        self.drain_traces(&mut tables);
        self.drain_dash(&mut tables);
        if self.sc.trace.qdisc {
            tables.push(self.qdisc_rows.take());
        }
        tables
    }

    /// Ends the run: reports connections still open as unfinished and returns the last records.
    pub fn finish(&mut self) -> Vec<Table> {
        if !self.finished_books {
            self.finished_books = true;
            for slot in 0..self.conns.len() as u32 {
                if self.tags[slot as usize].active {
                    self.record(slot, None);
                }
            }
            let now = self.sched.now();
            for m in 0..self.monitor_count() {
                let link = &self.links[self.bottleneck(m) as usize];
                let mon = if m < 2 {
                    &mut self.monitors[m]
                } else {
                    &mut self.hop_monitors[m - 2]
                };
                mon.close(
                    now,
                    link,
                    &mut self.bneck_rows,
                    &mut self.queue_rows,
                    &mut self.arrival_rows,
                );
            }
            self.summary.measured_s = (now.saturating_sub(self.warmup)) as f64 * 1e-9;
            // Hop 0's totals are the summary's own fields (the dumbbell's bottleneck); a chain
            // lists every hop, hop 0 included, in `hops`, all from `hop_summary`.
            let h0 = self.hop_summary(0, now);
            self.summary.forward = h0.forward;
            self.summary.reverse = h0.reverse;
            self.summary.queue_forward = h0.queue_forward;
            self.summary.queue_reverse = h0.queue_reverse;
            self.summary.qdisc_forward = h0.qdisc_forward;
            self.summary.qdisc_reverse = h0.qdisc_reverse;
            if self.sc.trace.qdisc {
                self.sample_qdisc(now);
            }
            if !self.sc.topology.hops.is_empty() {
                self.summary.hops = (0..self.topo.hops)
                    .map(|k| self.hop_summary(k, now))
                    .collect();
            }
            self.close_mix_metrics();
            self.close_pages();
            self.summary.dash = self.dash_summary();
        }
        self.drain()
    }

    fn page_sources(&self) -> impl Iterator<Item = (u32, &super::pages::PageSource)> {
        self.sources
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match s {
                super::Source::Pages(p) => Some((i as u32, p.as_ref())),
                _ => None,
            })
    }

    fn has_pages(&self) -> bool {
        self.page_sources().next().is_some()
    }

    /// End of run: the rows of pages still loading, and the `pages` summary.
    fn close_pages(&mut self) {
        if !self.has_pages() {
            return;
        }
        let mut rows = std::mem::take(&mut self.page_rows);
        for (i, p) in self.page_sources() {
            for r in p.unfinished() {
                rows.push_record(i, p.protocol(), &r);
            }
        }
        self.page_rows = rows;
        let summary = super::pages::PageSummary::of(self.page_sources().map(|(_, p)| p));
        self.summary.pages = Some(summary);
    }

    /// Hop `k`'s totals at the end of the run (`now`).
    fn hop_summary(&self, k: u32, now: Time) -> HopSummary {
        let (m, (mbps, delay_ms, ..)) = (2 * k as usize, self.sc.hop_link(k as usize));
        let (fwd, rev) = (
            &self.links[self.bottleneck(m) as usize],
            &self.links[self.bottleneck(m + 1) as usize],
        );
        HopSummary {
            hop: k,
            mbps,
            delay_ms,
            queue_forward: fwd.queue.aqm.params_json(),
            queue_reverse: rev.queue.aqm.params_json(),
            qdisc_forward: super::qdisc::tc_stats(fwd, now),
            qdisc_reverse: super::qdisc::tc_stats(rev, now),
            forward: self.monitor(m).summary.clone(),
            reverse: self.monitor(m + 1).summary.clone(),
        }
    }

    /// End of run: goodput, UDP flows, and the loss-run and queueing-delay distributions.
    fn close_mix_metrics(&mut self) {
        let measured = self.summary.measured_s;
        let mbps = |bytes: u64| {
            if measured > 0.0 {
                bytes as f64 * 8.0 / measured * 1e-6
            } else {
                0.0
            }
        };
        let sm = &mut self.summary;
        sm.tcp_goodput_bytes = self.goodput[0] + self.goodput[1];
        sm.tcp_goodput_mbps = mbps(sm.tcp_goodput_bytes);
        sm.tcp_goodput_forward_mbps = mbps(self.goodput[0]);
        sm.tcp_goodput_reverse_mbps = mbps(self.goodput[1]);
        for (dir, scope) in [(0, "queue_forward"), (1, "queue_reverse")] {
            let runs = if dir == 0 {
                &self.summary.forward.drop_runs
            } else {
                &self.summary.reverse.drop_runs
            };
            self.loss_run_rows.push_histogram(scope, -1, runs);
        }
        // The queueing-delay distributions of every hop (the drop runs: hop 0's only, the
        // `loss_runs` table has no hop column; a chain's summary has each hop's).
        for m in 0..self.monitor_count() {
            let link = &self.links[self.bottleneck(m) as usize];
            let mon = if m < 2 {
                &self.monitors[m]
            } else {
                &self.hop_monitors[m - 2]
            };
            mon.write_delay_rows(link, &mut self.queue_delay_rows);
        }
        if let Some(d) = self.source_delays.as_mut() {
            d.write_rows(&mut self.source_delay_rows);
            d.close_interval(self.sched.now());
        }
        self.loss_run_rows
            .push_histogram("tcp_all", -1, &self.tcp_loss_runs);
        self.summary.tcp_loss_runs = self.tcp_loss_runs.clone();
        let (mut rows, mut runs) = (
            std::mem::take(&mut self.udp_rows),
            std::mem::take(&mut self.loss_run_rows),
        );
        if !self.udp.is_empty() {
            self.close_udp(&mut rows, &mut runs);
        }
        self.udp_rows = rows;
        self.loss_run_rows = runs;
        if !self.video.is_empty() {
            let mut rows = std::mem::take(&mut self.video_call_rows);
            self.close_video(&mut rows);
            self.video_call_rows = rows;
        }
        if !self.rt.is_empty() {
            let mut r = std::mem::take(&mut self.rt_rows);
            let (v, g, p) = &mut *r;
            self.close_rt(v, g, p);
            self.rt_rows = r;
        }
    }

    /// Whole-run totals (after `finish`), as a struct.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// Whole-run totals as JSON.
    pub fn summary_json(&self) -> String {
        serde_json::to_string(&self.summary).expect("summary serializes")
    }

    pub fn engine_stats(&self) -> EngineStats {
        EngineStats {
            events: self.sched.executed() + self.tx_done_events,
            sim_time_s: self.sched.now() as f64 * 1e-9,
            bottleneck_packets: self.links[self.topo.forward() as usize].tx_packets
                + self.links[self.topo.reverse() as usize].tx_packets,
            peak_packets_in_flight: self.pkts.peak() as u64,
            connections_opened: self.next_conn_id,
            active_connections: self.tags.iter().filter(|t| t.active).count() as u64,
            delivered_packets: self.delivered_packets,
            stale_packets: self.stale_packets,
            pending_events: (self.sched.pending()
                + self.tx_due.iter().filter(|&&t| t != Time::MAX).count()
                + self.chain_due.iter().filter(|&&t| t != Time::MAX).count())
                as u64,
            connection_slots: self.conns.len() as u64,
            connection_bytes: self.connection_bytes() as u64,
        }
    }

    /// Bytes held by the connection slots: per slot its `Conn` and `ConnTag`, and the heap
    /// memory of its endpoints (Linux state, record of segments, range lists), application
    /// and loss histogram; an ended connection's slot holds its memory until it is reused.
    /// Allocator overhead (about 16 bytes per allocation) is not counted.
    pub fn connection_bytes(&self) -> usize {
        use std::mem::size_of;
        let fixed = size_of::<super::Conn>() + size_of::<super::flow_losses::ConnTag>();
        self.conns
            .iter()
            .map(|c| {
                fixed
                    + c.ep[0].heap_bytes()
                    + c.ep[1].heap_bytes()
                    + c.app.heap_bytes()
                    + c.losses.heap_bytes()
            })
            .sum()
    }
}
