//! Column buffers for the tables the simulation emits, drained in chunks.

use crate::measure::{Column, Table};

/// Builds a `Table` from named column vectors, leaving them empty with room for as many rows
/// as they held (the next batch is usually about as long: no reallocation as it grows).
macro_rules! take_table {
    ($name:expr, $self:ident { $($col:ident : $kind:ident),* $(,)? }) => {
        Table { name: $name, columns: vec![ $( (stringify!($col), Column::$kind(take_sized(&mut $self.$col))) ),* ] }
    };
}

/// The vector's rows, leaving it empty with the same number of rows reserved.
fn take_sized<T>(v: &mut Vec<T>) -> Vec<T> {
    let n = v.len();
    std::mem::replace(v, Vec::with_capacity(n))
}

/// `table` with a `hop` column after `direction` in a chain of bottlenecks
/// (`net::topology::Chain`; every batch, empty ones included, so that they stack);
/// unchanged otherwise, so that a dumbbell's tables keep their columns.
fn with_hop(mut table: Table, hop: &mut Vec<u64>, chained: bool) -> Table {
    if chained {
        let at = table
            .columns
            .iter()
            .position(|(name, _)| *name == "direction")
            .map_or(0, |i| i + 1);
        table
            .columns
            .insert(at, ("hop", Column::U64(take_sized(hop))));
    }
    table
}

/// One row per connection, written when the connection ends (or the run does).
#[derive(Default)]
pub struct ConnectionRows {
    pub conn_id: Vec<u64>,
    pub source: Vec<u64>,
    pub flow: Vec<u64>,
    pub client_side: Vec<&'static str>,
    pub client_host: Vec<u64>,
    pub server_host: Vec<u64>,
    pub base_rtt_ms: Vec<f64>,
    pub start_s: Vec<f64>,
    pub established_s: Vec<f64>,
    pub first_byte_s: Vec<f64>,
    pub last_byte_s: Vec<f64>,
    pub closed_s: Vec<f64>,
    pub request_bytes: Vec<u64>,
    pub response_bytes: Vec<u64>,
    pub bytes_delivered: Vec<u64>,
    /// Of those, the bytes delivered after the warm-up (both ends).
    pub bytes_delivered_measured: Vec<u64>,
    pub completed: Vec<bool>,
    pub aborted: Vec<bool>,
    pub syn_retransmits: Vec<u64>,
    pub fin_retransmits: Vec<u64>,
    pub data_retransmits: Vec<u64>,
    pub timeouts: Vec<u64>,
    pub fast_retransmits: Vec<u64>,
    pub segments_sent: Vec<u64>,
    pub min_rtt_sample_ms: Vec<f64>,
    pub ecn: Vec<bool>,
    pub ecn_reductions: Vec<u64>,
    pub ce_received: Vec<u64>,
    /// Packets of the connection dropped on arrival at a bottleneck queue after the warm-up,
    /// and the longest run of them in a row (`loss_runs` has the whole histogram).
    pub bottleneck_drops: Vec<u64>,
    pub longest_drop_run: Vec<u64>,
}

impl ConnectionRows {
    pub fn take(&mut self) -> Table {
        take_table!(
            "connections",
            self {
                conn_id: U64,
                source: U64,
                flow: U64,
                client_side: Str,
                client_host: U64,
                server_host: U64,
                base_rtt_ms: F64,
                start_s: F64,
                established_s: F64,
                first_byte_s: F64,
                last_byte_s: F64,
                closed_s: F64,
                request_bytes: U64,
                response_bytes: U64,
                bytes_delivered: U64,
                bytes_delivered_measured: U64,
                completed: Bool,
                aborted: Bool,
                syn_retransmits: U64,
                fin_retransmits: U64,
                data_retransmits: U64,
                timeouts: U64,
                fast_retransmits: U64,
                segments_sent: U64,
                min_rtt_sample_ms: F64,
                ecn: Bool,
                ecn_reductions: U64,
                ce_received: U64,
                bottleneck_drops: U64,
                longest_drop_run: U64,
            }
        )
    }
}

/// One row per reporting interval and bottleneck direction.
#[derive(Default)]
pub struct BottleneckRows {
    pub t_s: Vec<f64>,
    pub direction: Vec<&'static str>,
    /// The hop of a chain (`with_hop`); empty for the dumbbell.
    pub hop: Vec<u64>,
    pub chained: bool,
    pub arrivals: Vec<u64>,
    pub departures: Vec<u64>,
    pub tx_bytes: Vec<u64>,
    pub drops_early: Vec<u64>,
    pub drops_forced: Vec<u64>,
    pub drops_overflow: Vec<u64>,
    pub marks: Vec<u64>,
    pub link_losses: Vec<u64>,
    /// IP bits sent per second (packets' IP sizes), Mb/s.
    pub throughput_mbps: Vec<f64>,
    /// Fraction of the interval the transmitter was busy: utilization on the wire, link-layer
    /// framing included (`topology.*_framing`).
    pub utilization: Vec<f64>,
    /// Bits on the wire per second (framing included): `utilization` × the link's rate.
    pub throughput_wire_mbps: Vec<f64>,
    /// IP bits sent as a fraction of the link's rate (equal to `utilization` without framing).
    pub utilization_ip: Vec<f64>,
}

impl BottleneckRows {
    pub fn take(&mut self) -> Table {
        let t = take_table!(
            "bottleneck",
            self {
                t_s: F64,
                direction: Str,
                arrivals: U64,
                departures: U64,
                tx_bytes: U64,
                drops_early: U64,
                drops_forced: U64,
                drops_overflow: U64,
                marks: U64,
                link_losses: U64,
                throughput_mbps: F64,
                utilization: F64,
                throughput_wire_mbps: F64,
                utilization_ip: F64,
            }
        );
        with_hop(t, &mut self.hop, self.chained)
    }
}

/// One row per queue-sampling window and bottleneck direction.
#[derive(Default)]
pub struct QueueRows {
    pub t_s: Vec<f64>,
    pub direction: Vec<&'static str>,
    /// The hop of a chain (`with_hop`); empty for the dumbbell.
    pub hop: Vec<u64>,
    pub chained: bool,
    pub samples: Vec<u64>,
    pub mean_pkts: Vec<f64>,
    pub var_pkts: Vec<f64>,
    pub min_pkts: Vec<u64>,
    pub max_pkts: Vec<u64>,
    pub mean_bytes: Vec<f64>,
    pub aqm_state: Vec<f64>,
}

impl QueueRows {
    pub fn take(&mut self) -> Table {
        let t = take_table!(
            "queue",
            self {
                t_s: F64,
                direction: Str,
                samples: U64,
                mean_pkts: F64,
                var_pkts: F64,
                min_pkts: U64,
                max_pkts: U64,
                mean_bytes: F64,
                aqm_state: F64,
            }
        );
        with_hop(t, &mut self.hop, self.chained)
    }
}

/// One row per request/response exchange of a Web connection, written when the connection
/// ends (or the run does). Retransmission and timeout counts are the connection's totals.
#[derive(Default)]
pub struct ExchangeRows {
    pub conn_id: Vec<u64>,
    pub source: Vec<u64>,
    pub user: Vec<u64>,
    pub index: Vec<u64>,
    pub client_side: Vec<&'static str>,
    pub persistent: Vec<bool>,
    pub start_s: Vec<f64>,
    /// Arrival of the response's last byte.
    pub end_s: Vec<f64>,
    /// When the client read the end of the connection's stream and closed (NaN before).
    pub close_s: Vec<f64>,
    /// From `start_s` to the end of the exchange by its source's `response_end`: `end_s`, or
    /// for the last exchange of a connection that ends at its close, `close_s`.
    pub response_time_s: Vec<f64>,
    pub request_bytes: Vec<u64>,
    pub response_bytes: Vec<u64>,
    /// The exchange ended (by the same definition).
    pub completed: Vec<bool>,
    pub base_rtt_ms: Vec<f64>,
    pub syn_retransmits: Vec<u64>,
    pub fin_retransmits: Vec<u64>,
    pub data_retransmits: Vec<u64>,
    pub timeouts: Vec<u64>,
}

impl ExchangeRows {
    pub fn take(&mut self) -> Table {
        take_table!(
            "exchanges",
            self {
                conn_id: U64,
                source: U64,
                user: U64,
                index: U64,
                client_side: Str,
                persistent: Bool,
                start_s: F64,
                end_s: F64,
                close_s: F64,
                response_time_s: F64,
                request_bytes: U64,
                response_bytes: U64,
                completed: Bool,
                base_rtt_ms: F64,
                syn_retransmits: U64,
                fin_retransmits: U64,
                data_retransmits: U64,
                timeouts: U64,
            }
        )
    }
}

/// Packets and bytes arriving at the bottleneck queue per bin (`measure.burst_bin_ms`) and
/// direction, empty bins included: the series behind burstiness and Hurst estimates.
#[derive(Default)]
pub struct ArrivalRows {
    pub t_s: Vec<f64>,
    pub direction: Vec<&'static str>,
    pub packets: Vec<u64>,
    pub bytes: Vec<u64>,
}

impl ArrivalRows {
    pub fn take(&mut self) -> Table {
        take_table!(
            "arrivals",
            self {
                t_s: F64,
                direction: Str,
                packets: U64,
                bytes: U64
            }
        )
    }
}

/// One row per UDP CBR flow, written at the end of the run (counts after the warm-up).
#[derive(Default)]
pub struct CbrFlowRows {
    pub flow: Vec<u64>,
    pub source: Vec<u64>,
    pub index: Vec<u64>,
    pub sender_host: Vec<u64>,
    pub receiver_host: Vec<u64>,
    pub rate_mbps: Vec<f64>,
    pub packet_bytes: Vec<u64>,
    pub one_way_extra_ms: Vec<f64>,
    pub start_s: Vec<f64>,
    pub sent: Vec<u64>,
    pub delivered: Vec<u64>,
    pub lost: Vec<u64>,
    pub unresolved: Vec<u64>,
    pub loss_probability: Vec<f64>,
    pub delivered_bytes: Vec<u64>,
    pub throughput_mbps: Vec<f64>,
    pub longest_run: Vec<u64>,
}

impl CbrFlowRows {
    pub fn take(&mut self) -> Table {
        take_table!(
            "udp_flows",
            self {
                flow: U64,
                source: U64,
                index: U64,
                sender_host: U64,
                receiver_host: U64,
                rate_mbps: F64,
                packet_bytes: U64,
                one_way_extra_ms: F64,
                start_s: F64,
                sent: U64,
                delivered: U64,
                lost: U64,
                unresolved: U64,
                loss_probability: F64,
                delivered_bytes: U64,
                throughput_mbps: F64,
                longest_run: U64,
            }
        )
    }
}

/// Histograms of runs of consecutive losses after the warm-up, one row per non-empty bin:
/// `scope` = "udp_flow" (one UDP flow, `flow` = its id), "udp_all" (the UDP flows' runs
/// summed), "tcp_flow" (one TCP connection, `flow` = its conn_id; written when it ends),
/// "tcp_all" (the connections' runs summed), "queue_forward" / "queue_reverse" (consecutive
/// drops of the aggregate at a bottleneck queue, whatever the flows); `flow` = −1 for
/// aggregates. `run_length` = 64 collects the longer runs.
#[derive(Default)]
pub struct LossRunRows {
    pub scope: Vec<&'static str>,
    pub flow: Vec<i64>,
    pub run_length: Vec<u64>,
    pub count: Vec<u64>,
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

    pub fn take(&mut self) -> Table {
        take_table!(
            "loss_runs",
            self {
                scope: Str,
                flow: I64,
                run_length: U64,
                count: U64,
            }
        )
    }
}

/// Queueing-delay distribution at the bottleneck after the warm-up: one row per non-empty
/// bin (`delay_ms` = lower edge, `width_ms` its width; the overflow bin has width inf).
#[derive(Default)]
pub struct QueueDelayRows {
    pub direction: Vec<&'static str>,
    /// The hop of a chain (`with_hop`); empty for the dumbbell.
    pub hop: Vec<u64>,
    pub chained: bool,
    pub delay_ms: Vec<f64>,
    pub width_ms: Vec<f64>,
    pub count: Vec<u64>,
}

impl QueueDelayRows {
    pub fn take(&mut self) -> Table {
        let t = take_table!(
            "queue_delay",
            self {
                direction: Str,
                delay_ms: F64,
                width_ms: F64,
                count: U64,
            }
        );
        with_hop(t, &mut self.hop, self.chained)
    }
}

/// Queueing delay at the bottleneck by traffic source after the warm-up (`source_delay`):
/// one row per non-empty bin, with the bins of `queue_delay`. Written only for scenarios
/// whose sources differ in TCP or RTT.
#[derive(Default)]
pub struct SourceDelayRows {
    pub source: Vec<u64>,
    pub direction: Vec<&'static str>,
    /// The hop of a chain (`with_hop`); empty for the dumbbell.
    pub hop: Vec<u64>,
    pub chained: bool,
    pub delay_ms: Vec<f64>,
    pub width_ms: Vec<f64>,
    pub count: Vec<u64>,
}

impl SourceDelayRows {
    pub fn take(&mut self) -> Table {
        let t = take_table!(
            "source_delay",
            self {
                source: U64,
                direction: Str,
                delay_ms: F64,
                width_ms: F64,
                count: U64,
            }
        );
        with_hop(t, &mut self.hop, self.chained)
    }
}

/// tc-style statistics of the bottleneck queues over time (`[trace] qdisc`), long form: one
/// row per field per direction at the end of every reporting interval and of the run,
/// cumulative from the start (`sim::qdisc`).
#[derive(Default)]
pub struct QdiscRows {
    pub t_s: Vec<f64>,
    pub direction: Vec<&'static str>,
    pub field: Vec<&'static str>,
    pub value: Vec<f64>,
}

impl QdiscRows {
    pub fn take(&mut self) -> Table {
        take_table!(
            "qdisc",
            self {
                t_s: F64,
                direction: Str,
                field: Str,
                value: F64,
            }
        )
    }
}
