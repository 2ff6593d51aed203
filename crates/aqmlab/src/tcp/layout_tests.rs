//! The sizes of the per-connection state that every packet of a connection touches, held
//! by tests (issue 34; docs/performance.md, "Memory per open connection"): a field added to
//! the endpoint or to Linux's state costs a cache line per packet once it crosses a 64-byte
//! boundary, so a change of size must be a decision, made here with its measured cost.

use std::mem::size_of;

use super::config::TcpConfig;
use super::cong::{LinuxCold, LinuxCong};
use super::endpoint::Endpoint;

/// Cache lines of `n` bytes.
fn lines(n: usize) -> usize {
    n.div_ceil(64)
}

#[test]
fn endpoint_and_linux_state_sizes_are_held() {
    assert_eq!(
        size_of::<Endpoint>(),
        520,
        "the endpoint: 576 bytes before issue 34's layout work"
    );
    assert_eq!(
        size_of::<LinuxCong>(),
        496,
        "Linux's state: 800 bytes before issue 34's layout work"
    );
    assert_eq!(lines(size_of::<LinuxCong>()), 8);
}

/// A plain Linux Reno or CUBIC connection has no cold part (`LinuxCold`); the algorithms
/// that read it have one from the start, with their parts in it.
#[test]
fn only_configurations_that_use_it_have_a_cold_part() {
    for cfg in [TcpConfig::linux_reno(), TcpConfig::linux_cubic()] {
        let lx = LinuxCong::new(&cfg);
        assert!(lx.cold.is_none(), "{:?}", cfg.congestion_control);
        assert_eq!(lx.heap_bytes(), 0);
    }
    let bbr = LinuxCong::new(&TcpConfig::linux_bbr());
    let c = bbr.cold.as_deref().expect("BBR's cold part");
    assert!(c.pacer.is_some() && c.rate.is_some() && c.bbr.is_none());
    assert!(bbr.heap_bytes() >= size_of::<LinuxCold>());
    let dctcp = LinuxCong::new(&TcpConfig::linux_dctcp());
    assert!(
        dctcp.cold.is_some() && dctcp.dctcp().is_none(),
        "DCTCP starts at establishment"
    );
    let paced = TcpConfig {
        pacing: true,
        ..TcpConfig::linux_cubic()
    };
    assert!(LinuxCong::new(&paced).pacer().is_some());
}
