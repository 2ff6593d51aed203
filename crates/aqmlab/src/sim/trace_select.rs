//! Which connections and packets a trace keeps (`config::trace::Selection`), decided the same
//! way for captures and TCP state traces.

use crate::config::trace::Selection;
use crate::rng::{Rng, StreamKind};
use crate::units::{secs, Time};

#[derive(Clone, Debug)]
pub(super) struct Selector {
    /// Sorted connection ids; empty: any.
    connections: Vec<u64>,
    /// Sorted hosts; empty: any.
    hosts: Vec<u32>,
    sample: f64,
    seed: u64,
    start: Time,
    end: Time,
    pub udp: bool,
}

impl Selector {
    pub fn new(s: &Selection, seed: u64) -> Self {
        let mut connections = s.connections.clone();
        connections.sort_unstable();
        let mut hosts = s.hosts.clone();
        hosts.sort_unstable();
        Selector {
            connections,
            hosts,
            sample: s.sample,
            seed,
            start: secs(s.start_s),
            end: s.end_s.map_or(Time::MAX, secs),
            udp: s.udp,
        }
    }

    /// Inside the time window `[start_s, end_s)`.
    #[inline]
    pub fn at(&self, t: Time) -> bool {
        t >= self.start && t < self.end
    }

    /// A TCP connection between these hosts is kept. The sampled share draws one uniform
    /// number per connection id from its own stream: the same connections are kept whatever
    /// else the scenario traces or however the run is chunked.
    pub fn connection(&self, id: u64, client: u32, server: u32) -> bool {
        (self.connections.is_empty() || self.connections.binary_search(&id).is_ok())
            && self.host_pair(client, server)
            && (self.sample >= 1.0
                || Rng::stream(self.seed, StreamKind::TraceSample, id).uniform() < self.sample)
    }

    /// A UDP flow between these hosts is kept (connection ids and the sample apply to TCP
    /// connections only).
    pub fn udp_flow(&self, sender: u32, receiver: u32) -> bool {
        self.udp && self.host_pair(sender, receiver)
    }

    fn host_pair(&self, a: u32, b: u32) -> bool {
        self.hosts.is_empty()
            || self.hosts.binary_search(&a).is_ok()
            || self.hosts.binary_search(&b).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(sample: f64) -> Selection {
        Selection {
            connections: vec![],
            hosts: vec![],
            sample,
            start_s: 0.0,
            end_s: None,
            udp: true,
        }
    }

    #[test]
    fn the_sample_keeps_its_share_and_the_same_ids_every_time() {
        let s = Selector::new(&sel(0.25), 7);
        let kept: Vec<u64> = (0..20_000).filter(|&i| s.connection(i, 0, 1)).collect();
        let share = kept.len() as f64 / 20_000.0;
        // Binomial(20000, 0.25): sd 0.0031; 5 sd.
        assert!((share - 0.25).abs() < 0.016, "share {share}");
        let again: Vec<u64> = (0..20_000).filter(|&i| s.connection(i, 5, 9)).collect();
        assert_eq!(kept, again, "the draw depends on the id only");
        let other_seed = Selector::new(&sel(0.25), 8);
        assert!((0..20_000).any(|i| s.connection(i, 0, 1) != other_seed.connection(i, 0, 1)));
    }

    #[test]
    fn ids_hosts_and_window_all_must_match() {
        let mut c = sel(1.0);
        c.connections = vec![9, 3];
        c.hosts = vec![4];
        c.start_s = 1.0;
        c.end_s = Some(2.0);
        c.udp = false;
        let s = Selector::new(&c, 1);
        assert!(s.connection(3, 4, 7) && s.connection(9, 1, 4));
        assert!(!s.connection(3, 1, 2), "neither host is 4");
        assert!(!s.connection(5, 4, 7), "id 5 not listed");
        assert!(!s.udp_flow(4, 1), "udp off");
        assert!(s.at(secs(1.0)) && s.at(secs(1.999)) && !s.at(secs(2.0)) && !s.at(0));
    }
}
