//! Unit tests of the stream's receiver: loss by gaps, RFC 3550 jitter.

use super::*;

fn stream(interval: f64) -> Stream {
    Stream {
        up: true,
        receiver: 1,
        size: 200,
        first_measured: Some(0),
        ..Stream::fresh(Periodic::new(0, Time::MAX, interval))
    }
}

#[test]
fn gaps_are_losses() {
    let mut s = stream(20e6);
    for k in [0, 1, 4, 5, 9] {
        s.on_arrival(k);
    }
    assert_eq!(s.lost, 2 + 3);
}

/// RFC 3550 §6.4.1 by hand: transits 10, 14, 12, 12 ms. D = 4, 2, 0 ms;
/// J1 = 4/16 = 0.25, J2 = 0.25 + (2 − 0.25)/16 = 0.359375, J3 = 0.359375 − 0.359375/16
/// = 0.336914... ms.
#[test]
fn jitter_follows_rfc3550() {
    let mut s = stream(20e6);
    for (k, transit_ms) in [(0u64, 10u64), (1, 14), (2, 12), (3, 12)] {
        let sent = s.send_time(k);
        s.update_jitter(sent + transit_ms * MS, sent);
    }
    let j3 = 0.359375 - 0.359375 / 16.0;
    assert!((s.jitter * 1e-6 - j3).abs() < 1e-9, "{}", s.jitter);
}
