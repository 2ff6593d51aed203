//! New endpoints for connections: a configuration's `Endpoint::new`, made once and copied by
//! every connection, and the Linux state of ended connections, reused by new ones.
//!
//! A Linux endpoint's congestion-control state (`LinuxCong`: CUBIC, PRR, RACK-TLP and the
//! record of segments outstanding) is an allocation of its own. A Web run opens tens of
//! thousands of connections a second; allocating and freeing two of these for each cost about
//! 5 % of a gigabit run, and scattered them over the heap. When a connection slot is reused,
//! its old endpoints' allocations go back to a pool (`LinuxPool`) and the new ones take them,
//! last in first out (so the memory is usually still in cache), with their record's buffer
//! when it is small (`SentRecord::take_buffer`: the short transfers that follow need not
//! grow one again, and a large window's buffer is not kept for ever).

use super::config::TcpConfig;
use super::cong::LinuxCong;
use super::endpoint::Endpoint;
use crate::units::Time;

/// A configuration's new endpoint: the classic part and, for the Linux algorithms, the
/// Linux state it starts with.
pub struct EndpointTemplate {
    core: Endpoint,
    linux: Option<LinuxCong>,
}

/// Linux states of ended connections, ready for reuse: the boxes themselves are kept (an
/// endpoint holds its state boxed), not their contents.
#[derive(Default)]
#[allow(clippy::vec_box)]
pub struct LinuxPool(Vec<Box<LinuxCong>>);

impl EndpointTemplate {
    pub fn new(cfg: &TcpConfig) -> Self {
        let mut core = Endpoint::new(cfg, 0);
        let linux = core.take_linux().map(|b| *b);
        EndpointTemplate { core, linux }
    }

    /// A new endpoint, exactly `Endpoint::new(cfg, tick_phase)`, its Linux state taken from
    /// `pool` when it has one.
    pub fn instantiate(&self, tick_phase: Time, pool: &mut LinuxPool) -> Endpoint {
        let mut e = self.core.clone();
        e.set_tick_phase(tick_phase);
        if let Some(t) = &self.linux {
            let b = match pool.0.pop() {
                Some(mut b) => {
                    b.renew_from(t);
                    b
                },
                None => Box::new(t.clone()),
            };
            e.put_linux(b);
        }
        e
    }
}

impl LinuxPool {
    /// Takes an ended endpoint's Linux state for reuse.
    pub fn recycle(&mut self, e: &mut Endpoint) {
        if let Some(b) = e.take_linux() {
            self.0.push(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::Outbox;

    /// Every copy is exactly the endpoint `Endpoint::new` builds for its phase, field for
    /// field, whether its Linux state is new or reused from an endpoint that has carried
    /// traffic (a sent and acknowledged window, a timeout).
    #[test]
    fn a_copy_is_a_new_endpoint_with_or_without_reuse() {
        for cfg in [
            TcpConfig::freebsd_228(),
            TcpConfig::ns2_fulltcp(),
            TcpConfig::freebsd_4x(),
            TcpConfig::linux_reno(),
            TcpConfig::linux_cubic(),
            TcpConfig::linux_bbr(),
            TcpConfig::linux_prague(),
        ] {
            let template = EndpointTemplate::new(&cfg);
            let mut pool = LinuxPool::default();
            for phase in [0, 1, cfg.tick() / 3, cfg.tick() - 1] {
                let fresh = template.instantiate(phase, &mut pool);
                assert_eq!(
                    format!("{fresh:?}"),
                    format!("{:?}", Endpoint::new(&cfg, phase)),
                    "phase {phase}"
                );
                // A used endpoint: a connection opened, data sent, a timeout.
                let mut used = fresh;
                let mut out = Outbox::default();
                used.connect(0, &cfg, &mut out);
                used.on_timer(10 * crate::units::SEC, &cfg, &mut out);
                pool.recycle(&mut used);
                let reused = template.instantiate(phase, &mut pool);
                assert_eq!(
                    format!("{reused:?}"),
                    format!("{:?}", Endpoint::new(&cfg, phase)),
                    "phase {phase}, reused"
                );
            }
        }
    }
}
