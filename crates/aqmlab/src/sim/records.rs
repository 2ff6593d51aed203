//! The record tables the simulation emits: each table's columns, in order, with their types
//! (`row_buffer!`: one `Vec` per column, pushed where rows are made, drained in chunks by
//! `take`). The Python side reads the columns by name.

use super::row_buffer::row_buffer;

row_buffer! {
    /// One row per connection, written when the connection ends (or the run does).
    pub struct ConnectionRows => "connections" {
        conn_id: u64,
        source: u64,
        flow: u64,
        client_side: &'static str,
        client_host: u64,
        server_host: u64,
        base_rtt_ms: f64,
        start_s: f64,
        established_s: f64,
        first_byte_s: f64,
        last_byte_s: f64,
        closed_s: f64,
        request_bytes: u64,
        response_bytes: u64,
        bytes_delivered: u64,
        /// Of those, the bytes delivered after the warm-up (both ends).
        bytes_delivered_measured: u64,
        completed: bool,
        aborted: bool,
        syn_retransmits: u64,
        fin_retransmits: u64,
        data_retransmits: u64,
        timeouts: u64,
        fast_retransmits: u64,
        segments_sent: u64,
        min_rtt_sample_ms: f64,
        ecn: bool,
        ecn_reductions: u64,
        ce_received: u64,
        /// Packets of the connection dropped on arrival at a bottleneck queue after the
        /// warm-up, and the longest run of them in a row (`loss_runs` has the whole histogram).
        bottleneck_drops: u64,
        longest_drop_run: u64,
    }
}

row_buffer! {
    /// One row per reporting interval and bottleneck direction.
    pub struct BottleneckRows => "bottleneck" {
        t_s: f64,
        direction: &'static str,
        /// The hop of a chain of bottlenecks (`net::topology::Chain`).
        hop: u64 where chained,
        arrivals: u64,
        departures: u64,
        tx_bytes: u64,
        drops_early: u64,
        drops_forced: u64,
        drops_overflow: u64,
        marks: u64,
        link_losses: u64,
        /// IP bits sent per second (packets' IP sizes), Mb/s.
        throughput_mbps: f64,
        /// Fraction of the interval the transmitter was busy: utilization on the wire,
        /// link-layer framing included (`topology.*_framing`).
        utilization: f64,
        /// Bits on the wire per second (framing included): `utilization` × the link's rate.
        throughput_wire_mbps: f64,
        /// IP bits sent as a fraction of the link's rate (equal to `utilization` without
        /// framing).
        utilization_ip: f64,
    }
}

row_buffer! {
    /// One row per queue-sampling window and bottleneck direction.
    pub struct QueueRows => "queue" {
        t_s: f64,
        direction: &'static str,
        /// The hop of a chain of bottlenecks (`net::topology::Chain`).
        hop: u64 where chained,
        samples: u64,
        mean_pkts: f64,
        var_pkts: f64,
        min_pkts: u64,
        max_pkts: u64,
        mean_bytes: f64,
        aqm_state: f64,
    }
}

row_buffer! {
    /// One row per request/response exchange of a Web connection, written when the connection
    /// ends (or the run does). Retransmission and timeout counts are the connection's totals.
    pub struct ExchangeRows => "exchanges" {
        conn_id: u64,
        source: u64,
        user: u64,
        index: u64,
        client_side: &'static str,
        persistent: bool,
        start_s: f64,
        /// Arrival of the response's last byte.
        end_s: f64,
        /// When the client read the end of the connection's stream and closed (NaN before).
        close_s: f64,
        /// From `start_s` to the end of the exchange by its source's `response_end`: `end_s`,
        /// or for the last exchange of a connection that ends at its close, `close_s`.
        response_time_s: f64,
        request_bytes: u64,
        response_bytes: u64,
        /// The exchange ended (by the same definition).
        completed: bool,
        base_rtt_ms: f64,
        syn_retransmits: u64,
        fin_retransmits: u64,
        data_retransmits: u64,
        timeouts: u64,
    }
}

row_buffer! {
    /// Packets and bytes arriving at the bottleneck queue per bin (`measure.burst_bin_ms`) and
    /// direction, empty bins included: the series behind burstiness and Hurst estimates.
    pub struct ArrivalRows => "arrivals" {
        t_s: f64,
        direction: &'static str,
        packets: u64,
        bytes: u64,
    }
}

row_buffer! {
    /// One row per video call (`sim::video_call`), written at the end of the run (counts
    /// after the warm-up).
    pub struct VideoCallRows => "video_calls" {
        call: u64,
        source: u64,
        index: u64,
        sender_host: u64,
        receiver_host: u64,
        controller: &'static str,
        ecn: &'static str,
        start_s: f64,
        frames: u64,
        frames_delivered: u64,
        frames_lost: u64,
        frames_late: u64,
        freeze_ratio: f64,
        frame_delay_p50_ms: f64,
        frame_delay_p95_ms: f64,
        frame_delay_p99_ms: f64,
        frame_delay_max_ms: f64,
        packets_sent: u64,
        packets_delivered: u64,
        packets_lost: u64,
        packets_unresolved: u64,
        ce_marked: u64,
        feedback_sent: u64,
        feedback_received: u64,
        send_mbps: f64,
        receive_mbps: f64,
        target_mbps: f64,
    }
}

row_buffer! {
    /// One row per video call and `report_interval_s`: the controller's rate, the encoder's
    /// target, the rates sent and received in the interval, the receiver's last report.
    pub struct VideoRateRows => "video_rates" {
        t_s: f64,
        call: u64,
        target_mbps: f64,
        encoder_mbps: f64,
        send_mbps: f64,
        receive_mbps: f64,
        queue_delay_ms: f64,
        x_curr_ms: f64,
        loss_ratio: f64,
        mark_ratio: f64,
        buffer_bytes: u64,
    }
}

row_buffer! {
    /// One row per UDP CBR flow, written at the end of the run (counts after the warm-up).
    pub struct CbrFlowRows => "udp_flows" {
        flow: u64,
        source: u64,
        index: u64,
        sender_host: u64,
        receiver_host: u64,
        rate_mbps: f64,
        packet_bytes: u64,
        one_way_extra_ms: f64,
        start_s: f64,
        sent: u64,
        delivered: u64,
        lost: u64,
        unresolved: u64,
        loss_probability: f64,
        delivered_bytes: u64,
        throughput_mbps: f64,
        longest_run: u64,
    }
}

row_buffer! {
    /// Histograms of runs of consecutive losses after the warm-up, one row per non-empty bin:
    /// `scope` = "udp_flow" (one UDP flow, `flow` = its id), "udp_all" (the UDP flows' runs
    /// summed), "tcp_flow" (one TCP connection, `flow` = its conn_id; written when it ends),
    /// "tcp_all" (the connections' runs summed), "queue_forward" / "queue_reverse"
    /// (consecutive drops of the aggregate at a bottleneck queue, whatever the flows);
    /// `flow` = −1 for aggregates. `run_length` = 64 collects the longer runs.
    pub struct LossRunRows => "loss_runs" {
        scope: &'static str,
        flow: i64,
        run_length: u64,
        count: u64,
    }
}

impl LossRunRows {
    pub fn push_histogram(&mut self, scope: &'static str, flow: i64, hist: &[u64]) {
        for (len, &c) in hist.iter().enumerate().filter(|(_, &c)| c > 0) {
            self.scope.push(scope);
            self.flow.push(flow);
            self.run_length.push(len as u64);
            self.count.push(c);
        }
    }
}

row_buffer! {
    /// Queueing-delay distribution at the bottleneck after the warm-up: one row per non-empty
    /// bin (`delay_ms` = lower edge, `width_ms` its width; the overflow bin has width inf).
    pub struct QueueDelayRows => "queue_delay" {
        direction: &'static str,
        /// The hop of a chain of bottlenecks (`net::topology::Chain`).
        hop: u64 where chained,
        delay_ms: f64,
        width_ms: f64,
        count: u64,
    }
}

row_buffer! {
    /// Queueing delay at the bottleneck by traffic source after the warm-up (`source_delay`):
    /// one row per non-empty bin, with the bins of `queue_delay`. Written only for scenarios
    /// whose sources differ in TCP or RTT.
    pub struct SourceDelayRows => "source_delay" {
        source: u64,
        direction: &'static str,
        /// The hop of a chain of bottlenecks (`net::topology::Chain`).
        hop: u64 where chained,
        delay_ms: f64,
        width_ms: f64,
        count: u64,
    }
}

row_buffer! {
    /// Each traffic source's experience over time (`source_intervals`, Flent's `all_scaled`
    /// per source): per reporting interval after the warm-up, source and bottleneck direction
    /// (hop 0), its TCP goodput (bytes delivered in order to the receiving application, in
    /// the direction the bytes crossed) and the mean queueing delay of its TCP packets. Rows
    /// only where the source sent or received something; written for the scenarios that keep
    /// `source_delay`.
    pub struct SourceIntervalRows => "source_intervals" {
        t_s: f64,
        source: u64,
        direction: &'static str,
        goodput_mbps: f64,
        packets: u64,
        delay_mean_ms: f64,
    }
}

row_buffer! {
    /// tc-style statistics of the bottleneck queues over time (`[trace] qdisc`), long form: one
    /// row per field per direction at the end of every reporting interval and of the run,
    /// cumulative from the start (`sim::qdisc`).
    pub struct QdiscRows => "qdisc" {
        t_s: f64,
        direction: &'static str,
        field: &'static str,
        value: f64,
    }
}

row_buffer! {
    /// One row per page of a `pages` source (`sim::pages`), written when the page is loaded
    /// (or the run ends: `completed` false, `plt_s` NaN). Times from the page's start (its
    /// document connection's `connect()`).
    pub struct PageRows => "pages" {
        source: u64,
        user: u64,
        page: u64,
        protocol: &'static str,
        start_s: f64,
        /// To the first byte of the document's response (NaN: it never came).
        ttfb_s: f64,
        /// To the last byte of the page's last object.
        plt_s: f64,
        /// Requests: the document and every subresource.
        objects: u64,
        /// Response bytes the page's connections carry (HTTP/2 framing included), and those
        /// delivered to the browser.
        bytes: u64,
        bytes_delivered: u64,
        origins: u64,
        connections: u64,
        /// Every connection of the page delivered all its responses.
        completed: bool,
    }
}
