//! The presets: the studies' stacks (FreeBSD 2.2.8 and 4.5, ns-2 Full-TCP as Study C configured
//! it and as ns-2.35 ships it) and today's Linux, by name (`[tcp] preset`, `aqmlab presets`).
//!
//! FreeBSD 2.2.8, the model's default (`TcpConfig::default()`), is stated whole. Every other
//! preset states only how it differs from the preset it is closest to, each difference with
//! its source: FreeBSD 4.x, ns-2.35's Full-TCP and Linux Reno differ from FreeBSD 2.2.8,
//! Weigle's ns-2 settings from ns-2.35's, and Linux's other congestion controls from Linux
//! Reno. What they share (three duplicate ACKs, the RTT sample from the SYN, the model's
//! extensions off, HyStart's and Prague's defaults) is thus written once.
//!
//! Sources: model-facts §7 (shared/reference) summarising 4.4BSD-Lite2 `tcp_timer.c`,
//! `tcp_input.c`, `tcp_output.c`, FreeBSD 2.x `tcp_timer.h`, ns-2.35 `tcp.cc`/`tcp-full.cc`
//! and RFC 5681 / 6298 / 3390; for the Linux presets, Linux 6.x `include/net/tcp.h`,
//! `net/ipv4/tcp_*.c` and its sysctl defaults (docs/tcp.md).

use super::config::{
    CongestionControl, DelackClock, InitialTimer, NewRenoVariant, PragueVersion, Recovery,
    SackVariant, TcpConfig, TimerModel, NEVER,
};
use super::config_times::ConfigTimes;

/// A preset's constructor.
type Build = fn() -> TcpConfig;

/// Every name `[tcp] preset` takes but the deprecated ones, in the order `aqmlab presets`
/// shows them, with the preset it builds.
const NAMED: [(&str, Build); 12] = [
    ("freebsd-2.2.8", TcpConfig::freebsd_228),
    ("freebsd-4.x", TcpConfig::freebsd_4x),
    ("ns2-weigle2005", TcpConfig::ns2_fulltcp),
    ("ns2.35-fulltcp", TcpConfig::ns2_35_fulltcp),
    ("linux-reno", TcpConfig::linux_reno),
    ("linux-cubic", TcpConfig::linux_cubic),
    ("linux-dctcp", TcpConfig::linux_dctcp),
    ("linux-bbr", TcpConfig::linux_bbr),
    ("linux-prague", TcpConfig::linux_prague),
    ("linux-prague-2020", TcpConfig::linux_prague_2020),
    ("linux-ledbat", TcpConfig::linux_ledbat),
    // Linux's default congestion control, CUBIC.
    ("linux", TcpConfig::linux_cubic),
];

/// The names of `named`, in its order: `PRESETS` from `NAMED`, at compile time.
const fn names<const N: usize>(named: [(&'static str, Build); N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = named[i].0;
        i += 1;
    }
    out
}

impl TcpConfig {
    /// The preset names, in `NAMED`'s order.
    pub const PRESETS: &'static [&'static str] = &names(NAMED);

    /// Old preset names still accepted, and the names they stand for.
    pub const DEPRECATED_PRESETS: &'static [(&'static str, &'static str)] =
        &[("ns2-fulltcp", "ns2-weigle2005")];

    /// A preset by name, as written in scenarios (`[tcp] preset = "..."`). `ns2-fulltcp`, the
    /// former name of `ns2-weigle2005`, is still accepted (`DEPRECATED_PRESETS`).
    pub fn preset(name: &str) -> Option<Self> {
        let name = Self::DEPRECATED_PRESETS
            .iter()
            .find(|(old, _)| *old == name)
            .map_or(name, |&(_, new)| new);
        NAMED
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, build)| build())
    }

    /// FreeBSD 2.2.8 Reno as used in Study A (Christiansen et al. 2001): 16 KB window, delayed
    /// ACKs, Nagle, IW 1, 500 ms ticks, 1 s minimum RTO, SYN first retransmitted after ≈6 s
    /// (`srtt + 2·rttvar` with rttvar = 3 s), 4.4BSD backoff table.
    pub fn freebsd_228() -> Self {
        TcpConfig {
            mss: 1460,
            header_bytes: 40,
            rwnd: 16 * 1024,
            initial_window: 1,
            initial_ssthresh: 1_073_725_440, // TCP_MAXWIN << TCP_MAX_WINSHIFT
            recovery: Recovery::Reno,
            dupack_threshold: 3,
            delayed_ack: true,
            delack_segments: 2,
            delack_interval_ms: 200.0,
            delack_clock: DelackClock::Global,
            nagle: true,
            timer_model: TimerModel::Bsd,
            tick_ms: 500.0,
            min_rto_s: 1.0,
            max_rto_s: 64.0,
            initial_rto_s: 6.0,
            initial_timer: InitialTimer::APlus2d,
            backoff: vec![1, 2, 4, 8, 16, 32, 64],
            syn_backoff: vec![],
            max_retries: 12,
            connect_timeout_s: 75.0,
            rtt_sample_from_syn: true,
            ack_of_syn_opens_cwnd: true,
            ecn: false,
            // FreeBSD 2.2.8 (and 4.5, by default) did not use SACK; with `recovery = "sack"`
            // these presets run RFC 6675 with the RFC 2018 maximum of 4 blocks (no timestamps
            // in this model).
            sack_variant: SackVariant::Rfc6675,
            sack_max_blocks: 4,
            fin_when_idle: false,
            // Linux's key. BSD's own restart after idle (4.4BSD `tcp_output`: cwnd = one
            // segment once `t_idle` ≥ the RTO) is not modelled for the historic presets
            // (docs/tcp.md).
            slow_start_after_idle: false,
            newreno_variant: NewRenoVariant::Rfc6582,
            exact_halving: false,
            cwr_on_retransmit: false,
            limited_transmit: false,
            congestion_control: CongestionControl::Reno,
            // The Linux congestion controls' options, which Reno ignores, at their defaults
            // (the serde defaults of `TcpConfig`); every preset has these unless it says.
            hystart: true,
            hystart_plus_plus: false,
            prr: false,
            rack_tlp: false,
            frto: false,
            pacing: false,
            accecn: false,
            prague_rtt_scaling: true,
            prague_rtt_target_ms: 25.0,
            prague_rtt_transition: 4,
            prague_version: PragueVersion::V893e147,
            times: ConfigTimes::default(),
        }
    }

    /// FreeBSD 4.5 as used in Study B (Le et al. 2003, §3: 16 KB window). Differences from
    /// 2.2.8, from model-facts §7.4–7.5 (Netsem's FreeBSD 4.6 model): 10 ms clock (hz = 100,
    /// callout timers), initial RTO `TCPTV_RTOBASE` = 3 s with the SYN backoff table
    /// {1,1,1,1,1,2,4,8,16,32,64,64,64} (SYNs at 0, 3, 6, 9, 12, 15, 21, 33, 57 s), a 100 ms
    /// per-connection delayed-ACK timer, and NewReno recovery (`net.inet.tcp.newreno`, on by
    /// default in the 4.x line — unconfirmed for 4.5 exactly, see docs/tcp.md). Initial window
    /// 1 segment (`slowstart_flightsize` = 1; RFC 3390 came later), minimum RTO 1 s.
    pub fn freebsd_4x() -> Self {
        TcpConfig {
            recovery: Recovery::NewReno,
            delack_interval_ms: 100.0,
            delack_clock: DelackClock::Connection,
            tick_ms: 10.0,
            initial_rto_s: 3.0,
            initial_timer: InitialTimer::Base,
            syn_backoff: vec![1, 1, 1, 1, 1, 2, 4, 8, 16, 32, 64, 64, 64],
            ..Self::freebsd_228()
        }
    }

    /// ns-2.35's `Agent/TCP/FullTcp` with its defaults (`tcl/lib/ns-default.tcl`, `tcp/tcp.cc`,
    /// `tcp/tcp-full.cc` of ns-2.35): segments of 536 bytes plus 40 of header; `window_` 20
    /// segments, which is also the initial ssthresh; `windowInit_` 2 once the handshake is
    /// done; Reno (plain FullTcp: `reno_fastrecov_`); `segsperack_` 1, so every full segment
    /// is acknowledged at once and only sub-MSS data waits for the 100 ms delayed-ACK timer, a
    /// free-running clock (`interval_` 0.1 s); Nagle on (`nodelay_` false); 10 ms tick,
    /// `minrto_` 0.2 s, `maxrto_` 60 s, first RTO (SYN included) `rtxcur_init_` 3 s, doubled at
    /// each timeout (3, 6, 12, 24, 48, 60, 60 ... s); no retry limit: it retransmits forever.
    /// Preset `ns2.35-fulltcp`; `recovery = "newreno"` or `"sack"` selects
    /// `FullTcp/Newreno` or `FullTcp/Sack` (3 SACK blocks).
    pub fn ns2_35_fulltcp() -> Self {
        TcpConfig {
            mss: 536,                   // `segsize_`; 40 bytes of header, as BSD
            rwnd: 20 * 536,             // `window_` 20 segments
            initial_window: 2,          // `windowInit_`
            initial_ssthresh: 20 * 536, // `window_` again
            delack_segments: 1,         // `segsperack_`
            delack_interval_ms: 100.0,  // `interval_`, a free-running clock (`Global`, as BSD)
            timer_model: TimerModel::Ns2,
            tick_ms: 10.0,      // `tcpTick_`
            min_rto_s: 0.2,     // `minrto_`
            max_rto_s: 60.0,    // `maxrto_`
            initial_rto_s: 3.0, // `rtxcur_init_`, the SYN's first timer too
            initial_timer: InitialTimer::Base,
            // No retry counter and no connection-establishment timer: it retransmits forever.
            max_retries: NEVER,
            connect_timeout_s: f64::INFINITY,
            // `rtt_sample_from_syn` as BSD: Full-TCP's `foutput` times a SYN or SYN-ACK like
            // new data (`rtt_active_`), and `newack`, reached through `process_ACK` from
            // SYN_SENT and SYN_RECEIVED, samples it; only the BSD-style copy in SYN_SENT is
            // `#ifdef notdef`.

            // cwnd opens only on ACKs received in ESTABLISHED (`last_state_`).
            ack_of_syn_opens_cwnd: false,
            // `Agent/TCP/FullTcp/Sack`: max_sack_blocks_ 3 (model-facts §7.3).
            sack_variant: SackVariant::Ns2,
            sack_max_blocks: 3,
            // Full-TCP's own rules, 2.1b9 and 2.35 alike (docs/tcp.md; the fields' comments).
            fin_when_idle: true,
            newreno_variant: NewRenoVariant::Ns2,
            cwr_on_retransmit: true,
            // `precisionReduce_`, true since 2006.
            exact_halving: true,
            ..Self::freebsd_228()
        }
    }

    /// ns-2 Full-TCP as Weigle, Jeffay and Smith configured it in Study C (2005, Table 2): IW 2,
    /// 10 ms tick, min RTO 1 s, initial RTO 6 s, no delayed ACK, segment payload 1420 bytes, a
    /// 16 KB window, gives up like BSD (12 timeouts, 75 s to connect). Not ns-2.35's defaults
    /// (`ns2_35_fulltcp`). Preset `ns2-weigle2005` (formerly `ns2-fulltcp`).
    pub fn ns2_fulltcp() -> Self {
        let bsd = Self::freebsd_228();
        TcpConfig {
            // Table 2.
            mss: 1420,
            rwnd: 16 * 1024,
            delayed_ack: false,
            min_rto_s: 1.0,
            initial_rto_s: 6.0,
            // BSD's where ns-2.35's defaults differ: the initial ssthresh, the SYN's timer
            // (A + 2D from the initial RTO), and giving up (12 timeouts, 75 s to connect),
            // which ns-2 itself never does. `delack_segments` has no effect without delayed ACKs.
            initial_ssthresh: bsd.initial_ssthresh,
            initial_timer: bsd.initial_timer,
            max_retries: bsd.max_retries,
            connect_timeout_s: bsd.connect_timeout_s,
            delack_segments: bsd.delack_segments,
            // ns-2.1b9's, which Study C's authors modified (docs/studies.md): no
            // `precisionReduce_` (whole segments on an ECN reduction).
            exact_halving: false,
            ..Self::ns2_35_fulltcp()
        }
    }

    /// Linux 6.x with Reno (preset `linux-reno`): the kernel's defaults as a sender and
    /// receiver see them on an Ethernet path (sources in docs/tcp.md). Segments of 1448 bytes
    /// plus 52 of header (MTU 1500, 20 IP + 20 TCP + 12 of timestamp option); IW 10 (RFC 6928,
    /// `TCP_INIT_CWND`); SACK recovery with RACK-TLP and PRR (`rack_tlp`, `prr`; RFC 6675
    /// with both off) with at most 3 blocks (the timestamp option leaves room for 3); Limited
    /// Transmit; Linux's timer model (`TimerModel::Linux`): delayed ACKs when more than one
    /// full segment is unacknowledged or after the adaptive ATO (40 ms at first,
    /// `TCP_ATO_MIN`), quick-ACK mode for the first 16 ACKs (`tcp/delack.rs`); Linux's RTO
    /// estimator, SRTT + max(200 ms, the deviation; `TCP_RTO_MIN`), at most 120 s
    /// (`TCP_RTO_MAX`), 1 s before any sample (`TCP_TIMEOUT_INIT`), doubled at each timeout;
    /// jiffies of 4 ms (`CONFIG_HZ` = 250, the kernel's default and the testbed's kernel;
    /// `tick_ms = 1` for HZ = 1000) and timers on Linux's timer wheel; gives up data after 15
    /// timeouts (`tcp_retries2`); a SYN is retransmitted 1 s apart 4 times
    /// (`tcp_syn_linear_timeouts`, Linux ≥ 6.5) and then with doubling, 6 + 4 times in all
    /// (`tcp_syn_retries`): SYNs at 0, 1, 2, 3, 4, 5, 7, 11, 19, 35, 67 s, given up at 131 s
    /// (Linux before 6.5: 0, 1, 3, …, 63 s and 127 s; `syn_backoff` and `connect_timeout_s`
    /// give either); a 6 MB
    /// receive window (the `tcp_rmem` maximum that receive-buffer auto-tuning grows to);
    /// ECN off (`tcp_ecn` = 2 answers ECN but does not ask for it); Nagle off: Linux's Nagle
    /// (on unless `TCP_NODELAY`) is Minshall's variant, which holds a small segment only while
    /// an earlier small segment is unacknowledged, so a response's last partial segment goes
    /// at once, as with `nagle = false`, where the model's `nagle = true` (RFC 896) would hold
    /// it for an RTT.
    pub fn linux_reno() -> Self {
        TcpConfig {
            mss: 1448,
            header_bytes: 52,
            rwnd: 6 * 1024 * 1024, // the `tcp_rmem` maximum
            initial_window: 10,    // `TCP_INIT_CWND`
            recovery: Recovery::Sack,
            delack_interval_ms: 40.0, // `TCP_ATO_MIN`
            delack_clock: DelackClock::Connection,
            nagle: false,
            timer_model: TimerModel::Linux,
            tick_ms: 4.0,       // `CONFIG_HZ` = 250
            min_rto_s: 0.2,     // `TCP_RTO_MIN`
            max_rto_s: 120.0,   // `TCP_RTO_MAX`
            initial_rto_s: 1.0, // `TCP_TIMEOUT_INIT`
            initial_timer: InitialTimer::Base,
            backoff: vec![1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096],
            // `tcp_syn_linear_timeouts`, then doubling (`tcp_syn_retries`).
            syn_backoff: vec![1, 1, 1, 1, 1, 2, 4, 8, 16, 32, 64],
            max_retries: 15, // `tcp_retries2`
            // 5·1 + 2 + 4 + ... + 64 s: the 11th SYN timer, which the timer wheel fires at or
            // after the nominal 131 s (the 10th near 67 s); a millisecond less so that the
            // comparison never depends on rounding.
            connect_timeout_s: 130.999,
            ack_of_syn_opens_cwnd: false,
            sack_max_blocks: 3, // the timestamp option leaves room for 3
            limited_transmit: true,
            congestion_control: CongestionControl::LinuxReno,
            prr: true,
            rack_tlp: true,
            frto: true,                  // `tcp_frto` = 2
            slow_start_after_idle: true, // `tcp_slow_start_after_idle` = 1
            ..Self::freebsd_228()
        }
    }

    /// Linux 6.x with its default congestion control, CUBIC with HyStart (preset
    /// `linux-cubic`); otherwise `linux_reno`.
    pub fn linux_cubic() -> Self {
        TcpConfig {
            congestion_control: CongestionControl::Cubic,
            ..Self::linux_reno()
        }
    }

    /// Linux 6.x with DCTCP (preset `linux-dctcp`, `net.ipv4.tcp_congestion_control = dctcp`
    /// with ECN negotiated); otherwise `linux_reno`.
    pub fn linux_dctcp() -> Self {
        TcpConfig {
            congestion_control: CongestionControl::Dctcp,
            ecn: true,
            ..Self::linux_reno()
        }
    }

    /// Linux 6.x with BBR v1 (preset `linux-bbr`, `net.ipv4.tcp_congestion_control = bbr`
    /// without `sch_fq`: TCP's internal pacing, `tcp_needs_internal_pacing`); otherwise
    /// `linux_reno`.
    pub fn linux_bbr() -> Self {
        TcpConfig {
            congestion_control: CongestionControl::Bbr,
            pacing: true,
            ..Self::linux_reno()
        }
    }

    /// TCP Prague as the L4S team's Linux kernel runs it (preset `linux-prague`,
    /// `net.ipv4.tcp_congestion_control = prague`: `tcp_prague.c` forces ECN with AccECN
    /// and pacing); otherwise `linux_reno` (RACK-TLP, PRR, Linux timers).
    pub fn linux_prague() -> Self {
        TcpConfig {
            congestion_control: CongestionControl::Prague,
            ecn: true,
            accecn: true,
            pacing: true,
            ..Self::linux_reno()
        }
    }

    /// TCP Prague as the L4S test suite's testbed ran it (preset `linux-prague-2020`): the
    /// module of L4STeam/linux b256dae (version 0.5, 2020-08-04; l4s-tests README, "Test
    /// Setup") at its defaults: `prague_rtt_scaling` = `RTT_CONTROL_NONE`,
    /// `prague_rtt_target` 15 ms, `prague_rtt_transition` 100 (both unused without RTT
    /// scaling); otherwise as `linux-prague`.
    pub fn linux_prague_2020() -> Self {
        TcpConfig {
            prague_version: PragueVersion::Vb256dae,
            prague_rtt_scaling: false,
            prague_rtt_target_ms: 15.0,
            prague_rtt_transition: 100,
            ..Self::linux_prague()
        }
    }

    /// A LEDBAT sender (RFC 6817, `tcp/ledbat.rs`) on Linux's endpoint (preset
    /// `linux-ledbat`): LEDBAT's window rule in place of Reno's, with TARGET 100 ms and GAIN 1
    /// (RFC 6817 §2.5; RFC 7928 §5.4), libutp's slow-start exit, and the one-way delay
    /// reported in the timestamp option (`flags::TS`); Linux has no LEDBAT in its tree, so
    /// the rest — IW 10, SACK with RACK-TLP and PRR, Linux's timers and delayed ACKs, the
    /// loss response of Linux Reno (ssthresh = max(cwnd/2, 2), RFC 6817's halving with
    /// MIN_CWND 2) — is `linux_reno`'s, as the out-of-tree module tcp_ledbat runs it.
    pub fn linux_ledbat() -> Self {
        TcpConfig {
            congestion_control: CongestionControl::Ledbat,
            ..Self::linux_reno()
        }
    }
}

impl Default for TcpConfig {
    fn default() -> Self {
        Self::freebsd_228()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_builds_its_preset_and_an_old_name_the_new_ones() {
        assert_eq!(
            TcpConfig::PRESETS,
            NAMED.iter().map(|(n, _)| *n).collect::<Vec<_>>()
        );
        for &(name, build) in &NAMED {
            assert_eq!(TcpConfig::preset(name), Some(build()), "{name}");
            build().validate(name).unwrap();
        }
        for &(old, new) in TcpConfig::DEPRECATED_PRESETS {
            assert!(!TcpConfig::PRESETS.contains(&old));
            assert_eq!(TcpConfig::preset(old), TcpConfig::preset(new));
        }
        assert_eq!(TcpConfig::preset("linux"), Some(TcpConfig::linux_cubic()));
        assert_eq!(TcpConfig::preset("freebsd"), None);
        assert_eq!(TcpConfig::default(), TcpConfig::freebsd_228());
    }
}
