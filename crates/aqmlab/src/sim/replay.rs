//! The `replay` source (`TrafficConfig::Replay`): opens the recorded connections at their
//! times. Each start event opens row `k` and schedules row `k + 1`, so one event is pending
//! per source however many rows there are (memory flat in simulated time).

use super::delay_boxes::ExtraRtt;
use super::sources::OpenRequest;
use super::web_app::{Script, WebExchange};
use crate::config::replay::ReplayConnections;
use crate::units::{secs, Time};

pub struct ReplaySource {
    client_hosts: u32,
    server_hosts: u32,
}

impl ReplaySource {
    pub fn new(client_hosts: u32, server_hosts: u32) -> Self {
        ReplaySource {
            client_hosts,
            server_hosts,
        }
    }

    /// Row `k`'s start time.
    pub fn start(rows: &ReplayConnections, k: usize) -> Option<Time> {
        rows.start_s.get(k).map(|&t| secs(t))
    }

    /// Row `k` as a connection to open. Hosts go round, as ns-2's PackMime assigns its
    /// client and server nodes (packmime_HTTP.cc `setup_connection`); the identity `k + 1`
    /// keys the connection's streams (its timer phases, and its `[rtt]` draw without
    /// `rtt_ms`).
    pub fn connection(&self, rows: &ReplayConnections, k: usize) -> OpenRequest {
        let delay = rows.server_delay_s.as_ref().map_or(0.0, |d| d[k]);
        OpenRequest {
            identity: k as u64 + 1,
            client: (k as u64 % self.client_hosts as u64) as u32,
            server: (k as u64 % self.server_hosts as u64) as u32,
            script: Script::One(WebExchange {
                request: rows.request_bytes[k],
                response: rows.response_bytes[k],
                gap: 0,
                server_delay: secs(delay),
            }),
            user: None,
            extra_rtt: rows.rtt_ms.as_ref().map(|r| {
                let total = secs(r[k] * 1e-3);
                match &rows.client_rtt_ms {
                    Some(c) => ExtraRtt {
                        total,
                        client: secs(c[k] * 1e-3).min(total),
                    },
                    None => ExtraRtt::even(total),
                }
            }),
            primary: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_become_connections_with_their_values() {
        let rows = ReplayConnections {
            start_s: vec![0.25, 1.0],
            request_bytes: vec![300, 20],
            response_bytes: vec![7, 90_000],
            server_delay_s: Some(vec![0.0, 0.125]),
            rtt_ms: Some(vec![12.0, 0.5]),
            client_rtt_ms: Some(vec![2.0, 0.25]),
        };
        let src = ReplaySource::new(3, 2);
        assert_eq!(ReplaySource::start(&rows, 1), Some(secs(1.0)));
        assert_eq!(ReplaySource::start(&rows, 2), None);
        let c = src.connection(&rows, 1);
        assert_eq!((c.identity, c.client, c.server), (2, 1, 1));
        assert_eq!(
            c.extra_rtt,
            Some(ExtraRtt {
                total: secs(0.0005),
                client: secs(0.00025)
            })
        );
        let Script::One(e) = c.script else {
            panic!("one exchange")
        };
        assert_eq!(
            (e.request, e.response, e.server_delay),
            (20, 90_000, secs(0.125))
        );
    }
}
