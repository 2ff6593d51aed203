//! The real-time applications' record tables (`sim::realtime`), written at the end of the run,
//! counts after the warm-up. Delays in ms; a delay of a stream with no packet is NaN.

use crate::sim::row_buffer::row_buffer;

row_buffer! {
    /// One row per direction of each voice call (`direction` = "up": client to server).
    pub struct VoiceStreamRows => "voice_streams" {
        flow: u64,
        source: u64,
        index: u64,
        direction: &'static str,
        codec: &'static str,
        sender_host: u64,
        receiver_host: u64,
        packet_bytes: u64,
        frame_ms: f64,
        one_way_extra_ms: f64,
        start_s: f64,
        sent: u64,
        /// Arrived (on time or late), lost in the network, late for the jitter buffer (of
        /// those delivered), still unresolved when the run ended.
        delivered: u64,
        lost: u64,
        late: u64,
        unresolved: u64,
        /// Runs of consecutive packets lost or late (G.107's bursts, for BurstR).
        bursts: u64,
        ce_marked: u64,
        delay_p50_ms: f64,
        delay_p95_ms: f64,
        delay_p99_ms: f64,
        delay_max_ms: f64,
        /// RFC 3550 §6.4.1 interarrival jitter at the end of the run.
        jitter_ms: f64,
        jitter_buffer_ms: f64,
        /// One-way delay of the buffer's anchor packet + the buffer + frame + look-ahead.
        mouth_to_ear_ms: f64,
    }
}

row_buffer! {
    /// One row per game flow (a player): both directions and the RTT seen by the client.
    pub struct GameFlowRows => "game_flows" {
        flow: u64,
        source: u64,
        index: u64,
        client_host: u64,
        server_host: u64,
        client_rate_hz: f64,
        tick_hz: f64,
        client_bytes: u64,
        server_bytes: u64,
        start_s: f64,
        up_sent: u64,
        up_delivered: u64,
        up_lost: u64,
        up_unresolved: u64,
        down_sent: u64,
        down_delivered: u64,
        down_lost: u64,
        down_unresolved: u64,
        up_delay_p50_ms: f64,
        up_delay_p95_ms: f64,
        up_delay_p99_ms: f64,
        down_delay_p50_ms: f64,
        down_delay_p95_ms: f64,
        down_delay_p99_ms: f64,
        rtt_samples: u64,
        rtt_p50_ms: f64,
        rtt_p95_ms: f64,
        rtt_p99_ms: f64,
        rtt_max_ms: f64,
        ce_marked: u64,
    }
}

row_buffer! {
    /// One row per ping probe sent after the warm-up: its send time and RTT (NaN unless
    /// `status` = "answered"; "lost": a later probe was answered first; "unresolved": none
    /// was, by the end of the run).
    pub struct PingProbeRows => "ping_probes" {
        flow: u64,
        source: u64,
        seq: u64,
        t_s: f64,
        rtt_ms: f64,
        status: &'static str,
    }
}
