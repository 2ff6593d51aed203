//! The connections a PackMime-HTTP/1.0 source opens, drawn without simulating the network:
//! the same generators, streams and order of draws as a run's source (`PackMimeSource`, one
//! `Ev::Start` per connection at the previous start plus the next gap), so row k is the k-th
//! connection a run of the same seed and source index opens. What it is for: comparing our
//! PackMime model with ns-2.35's own random variables over many seeds at no simulation cost
//! (validation's `workload` suite); a test checks it against a run's `connections` table.

use super::sources::PackMimeSource;
use super::web_app::Script;
use crate::measure::table::{Column, Table};
use crate::units::{as_secs, Time};

/// Every connection PackMime source `source` of a run with `seed` opens before `until`, at
/// `rate` new connections/s with its own RTTs (`packmime_rtt`): a table with the columns of
/// a replay file — `start_s`, `request_bytes`, `response_bytes`, `server_delay_s`, `rtt_ms`
/// (the DelayBoxes' two samples together) and `client_rtt_ms` (the client-side box's).
pub fn packmime_draws(seed: u64, source: u32, rate: f64, until: Time) -> Table {
    let mut p = PackMimeSource::new(seed, source, rate, false, true, None, 1, 1);
    let (mut start, mut request, mut response) = (Vec::new(), Vec::new(), Vec::new());
    let (mut delay, mut rtt, mut client_rtt) = (Vec::new(), Vec::new(), Vec::new());
    // The first connection opens one gap after time 0, as `source_events` schedules it.
    let mut t = p.next_gap();
    while t < until {
        let open = p.next_connection();
        let Script::One(e) = open.script else {
            unreachable!("HTTP/1.0: one exchange per connection")
        };
        let extra = open
            .extra_rtt
            .expect("packmime_rtt draws each connection's RTT");
        start.push(as_secs(t));
        request.push(e.request);
        response.push(e.response);
        delay.push(as_secs(e.server_delay));
        rtt.push(ms(extra.total));
        client_rtt.push(ms(extra.client));
        t += p.next_gap();
    }
    Table {
        name: "packmime_draws",
        columns: vec![
            ("start_s", Column::F64(start)),
            ("request_bytes", Column::U64(request)),
            ("response_bytes", Column::U64(response)),
            ("server_delay_s", Column::F64(delay)),
            ("rtt_ms", Column::F64(rtt)),
            ("client_rtt_ms", Column::F64(client_rtt)),
        ],
    }
}

fn ms(t: Time) -> f64 {
    as_secs(t) * 1e3
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::secs;

    #[test]
    fn draws_connections_in_order_at_about_the_rate() {
        let t = packmime_draws(3, 0, 50.0, secs(100.0));
        let Some(Column::F64(start)) = t.column("start_s") else {
            panic!("start_s")
        };
        // 100 s at 50/s: about 5,000 connections (the LRD count varies by a few per cent).
        assert!((4000..6000).contains(&start.len()), "{}", start.len());
        assert!(start.windows(2).all(|w| w[0] <= w[1]) && start[start.len() - 1] < 100.0);
        let (Some(Column::F64(rtt)), Some(Column::F64(client))) =
            (t.column("rtt_ms"), t.column("client_rtt_ms"))
        else {
            panic!("rtt columns")
        };
        assert!(rtt.iter().zip(client).all(|(r, c)| *c >= 0.0 && c <= r));
        // Another source index draws other connections.
        let other = packmime_draws(3, 1, 50.0, secs(100.0));
        assert_ne!(t.column("request_bytes"), other.column("request_bytes"));
    }
}
