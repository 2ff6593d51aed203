//! Page loads (`kind = "pages"`): load times computed by hand for fixed pages over HTTP/2 and
//! HTTP/1.1, bytes conserved for drawn pages, the summary against the rows, bad values.

use aqmlab::config::pages::{FixedPage, PageProtocol, PagesConfig};
use aqmlab::config::{Scenario, Side, TrafficConfig};
use aqmlab::sim::Simulation;

use crate::common::*;

fn users(n: u32, protocol: PageProtocol, page: Option<FixedPage>) -> PagesConfig {
    PagesConfig {
        users: n,
        client_side: Side::Left,
        protocol,
        device: Default::default(),
        h1_connections: 6,
        request_bytes: 700,
        start_spread_s: 0.0,
        think_s: Some(100.0),
        page,
    }
}

/// `base()` (RTT 100 ms in the delay box, no link delays) with a `mbps` bottleneck, a window
/// that holds each connection's share of these pages (initial window 64 segments, the most
/// allowed, so no slow start), no Nagle
/// (browsers set TCP_NODELAY), one page per user.
fn one_page(mbps: f64, cfg: PagesConfig) -> Scenario {
    let mut sc = base(5.0);
    sc.topology.bottleneck_mbps = mbps;
    sc.tcp.initial_window = 64;
    sc.tcp.rwnd = 1 << 20;
    sc.tcp.nagle = false;
    sc.tcp.delayed_ack = false;
    sc.traffic = vec![TrafficConfig::Pages(cfg)];
    sc
}

fn fixed(document: u64, objects: &[(u64, u32)]) -> FixedPage {
    FixedPage {
        document_bytes: document,
        object_bytes: objects.iter().map(|o| o.0).collect(),
        object_origins: objects.iter().map(|o| o.1).collect(),
    }
}

/// Bytes on the wire for `payload` application bytes in full segments of `mss` with `header`
/// bytes each.
fn wire(payload: u64, mss: u64, header: u64) -> u64 {
    payload + payload.div_ceil(mss) * header
}

/// HTTP/2 over an uncongested 5 Mb/s bottleneck, RTT 100 ms: a 20,000-byte document, two
/// 40,000-byte objects on its origin and three 20,000-byte objects on a second origin (each
/// connection's bytes within the initial window).
/// By hand: the document after the handshake's RTT and the request's RTT, plus its bytes at
/// 5 Mb/s; its origin's objects one more RTT later (the requests ride the open connection);
/// the second origin's connection opens with the document and its objects reach the
/// bottleneck one RTT behind the first origin's, while the link is still busy with them
/// (those take 132 ms), so
/// the link serves every byte after the first back to back:
/// PLT = 3 RTT + (document + origin 0's block + origin 1's block) on the wire / 5 Mb/s,
/// each block with RFC 9113's framing (`sim::pages`' unit tests count it), plus the two
/// requests on the critical path serialized upstream at 5 Mb/s (the document's, 24 + 9 + 9
/// preface octets and 9 + 700 of HEADERS, and origin 0's two HEADERS frames, one segment
/// each); TTFB = 2 RTT + the document's request upstream + one full packet downstream.
/// What is left (handshake segments, 1 Gb/s access links) is under a millisecond.
#[test]
fn http2_page_load_time_matches_the_hand_computation() {
    let page = fixed(
        20_000,
        &[
            (40_000, 0),
            (40_000, 0),
            (20_000, 1),
            (20_000, 1),
            (20_000, 1),
        ],
    );
    let sc = one_page(5.0, users(1, PageProtocol::Http2, Some(page)));
    let (mss, hdr) = (sc.tcp.mss as u64, sc.tcp.header_bytes as u64);
    let (_, t) = run(sc);
    let p = table(&t, "pages");
    assert_eq!(p.rows(), 1);
    let h2 = |b: u64| 9 + b + 9 * b.div_ceil(16_384);
    let doc = 18 + h2(20_000);
    let origin0 = 2 * h2(40_000);
    let origin1 = 18 + 3 * h2(20_000);
    let bits = 8 * (wire(doc, mss, hdr) + wire(origin0, mss, hdr) + wire(origin1, mss, hdr));
    let up = |request: u64| 8.0 * wire(request, mss, hdr) as f64 / 5e6;
    let (doc_request, batch_request) = (42 + 9 + 700, 2 * (9 + 700));
    let plt = 0.3 + bits as f64 / 5e6 + up(doc_request) + up(batch_request);
    let ttfb = 0.2 + up(doc_request) + 8.0 * (mss + hdr) as f64 / 5e6;
    let (got_plt, got_ttfb) = (f64s(p, "plt_s")[0], f64s(p, "ttfb_s")[0]);
    assert!(
        (got_plt - plt).abs() < 1e-3,
        "PLT {got_plt} s, by hand {plt} s"
    );
    assert!(
        (got_ttfb - ttfb).abs() < 1e-3,
        "TTFB {got_ttfb} s, by hand {ttfb} s"
    );
    assert_eq!(u64s(p, "bytes")[0], doc + origin0 + origin1);
    assert_eq!(u64s(p, "bytes_delivered")[0], doc + origin0 + origin1);
    assert_eq!(
        (
            u64s(p, "objects")[0],
            u64s(p, "origins")[0],
            u64s(p, "connections")[0]
        ),
        (6, 2, 2)
    );
    assert!(bools(p, "completed")[0]);
}

/// HTTP/1.1 on a fast link (1 Gb/s: serialization under a millisecond), RTT 100 ms, twelve
/// 1,000-byte objects on the document's origin. With six connections the document's
/// connection carries the document (handshake + request: 2 RTT) and objects 0 and 6
/// (2 RTT); the five opened when the document arrives each need a handshake and carry two
/// objects in sequence (3 RTT): PLT = 5 RTT = 500 ms. With four connections per origin: the
/// document's carries three objects (2 + 3 RTT), the other three three each (2 + 1 + 3):
/// 600 ms. Over HTTP/2 the same page takes 3 RTT. Without the limit it would be 4 RTT.
#[test]
fn http11_six_connection_limit_queues_objects() {
    let objects: Vec<(u64, u32)> = (0..12).map(|_| (1_000, 0)).collect();
    let plt = |protocol: PageProtocol, h1: u32| {
        let mut cfg = users(1, protocol, Some(fixed(10_000, &objects)));
        cfg.h1_connections = h1;
        let (_, t) = run(one_page(1000.0, cfg));
        let p = table(&t, "pages");
        (f64s(p, "plt_s")[0], u64s(p, "connections")[0])
    };
    for (protocol, h1, rtts, conns) in [
        (PageProtocol::Http11, 6, 5.0, 6),
        (PageProtocol::Http11, 4, 6.0, 4),
        (PageProtocol::Http2, 6, 3.0, 1),
    ] {
        let (got, n) = plt(protocol, h1);
        let by_hand = 0.1 * rtts;
        assert!(
            got >= by_hand && got - by_hand < 1e-3,
            "{protocol:?} with {h1}: PLT {got} s, by hand {by_hand} s"
        );
        assert_eq!(n, conns);
    }
}

/// Drawn pages (mobile tables), a few users through a 20 Mb/s drop-tail bottleneck for 30 s:
/// every completed page delivered exactly the bytes it asked for; the summary counts what the
/// rows show; the same seed gives the same pages.
#[test]
fn drawn_pages_conserve_bytes_and_the_summary_matches_the_rows() {
    let mk = || {
        let mut sc = one_page(20.0, users(4, PageProtocol::Http2, None));
        sc.duration_s = 30.0;
        sc.warmup_s = 5.0;
        sc.tcp.initial_window = 10;
        if let TrafficConfig::Pages(c) = &mut sc.traffic[0] {
            c.think_s = Some(1.0);
            c.start_spread_s = 2.0;
        }
        sc
    };
    let (sim, t) = run(mk());
    let p = table(&t, "pages");
    let (bytes, got) = (u64s(p, "bytes"), u64s(p, "bytes_delivered"));
    let (done, start) = (bools(p, "completed"), f64s(p, "start_s"));
    let completed: Vec<usize> = (0..p.rows()).filter(|&i| done[i]).collect();
    assert!(completed.len() >= 10, "{} pages completed", completed.len());
    for &i in &completed {
        assert_eq!(bytes[i], got[i], "page row {i}");
    }
    let summary: serde_json::Value = serde_json::from_str(&sim.summary_json()).unwrap();
    let pages = &summary["pages"];
    let measured = completed.iter().filter(|&&i| start[i] >= 5.0).count() as u64;
    assert_eq!(pages["pages_completed"].as_u64(), Some(measured));
    let mut plt: Vec<f64> = completed
        .iter()
        .filter(|&&i| start[i] >= 5.0)
        .map(|&i| f64s(p, "plt_s")[i])
        .collect();
    plt.sort_by(|a, b| a.total_cmp(b));
    let h = (plt.len() - 1) as f64 * 0.5;
    let median =
        plt[h.floor() as usize] + (plt[h.ceil() as usize] - plt[h.floor() as usize]) * h.fract();
    assert!((pages["plt_p50_s"].as_f64().unwrap() - median).abs() < 1e-12);
    let (_, again) = run(mk());
    assert_eq!(digest(&t), digest(&again));
}

/// A run without a `pages` source has no `pages` table and no `pages` summary section.
#[test]
fn runs_without_pages_have_neither_table_nor_section() {
    let (sim, t) = run(base(1.0));
    assert!(t.iter().all(|x| x.name != "pages"));
    assert!(!sim.summary_json().contains("\"pages\""));
}

/// Bad values: one line naming the field, its value and what is allowed.
#[test]
fn bad_values_are_refused_with_the_field_named() {
    let json = |traffic: &str| {
        let mut v: serde_json::Value = serde_json::to_value(base(1.0)).unwrap();
        v["traffic"] = serde_json::from_str(traffic).unwrap();
        v.to_string()
    };
    for (traffic, field) in [
        (r#"[{"kind":"pages","users":0}]"#, "traffic[0].users"),
        (
            r#"[{"kind":"pages","users":1,"h1_connections":7}]"#,
            "traffic[0].h1_connections",
        ),
        (
            r#"[{"kind":"pages","users":1,"request_bytes":0}]"#,
            "traffic[0].request_bytes",
        ),
        (
            r#"[{"kind":"pages","users":1,"think_s":-1}]"#,
            "traffic[0].think_s",
        ),
        (
            r#"[{"kind":"pages","users":1,"start_spread_s":-1}]"#,
            "traffic[0].start_spread_s",
        ),
        (
            r#"[{"kind":"pages","users":1,"page":{"document_bytes":0}}]"#,
            "traffic[0].page.document_bytes",
        ),
        (
            r#"[{"kind":"pages","users":1,"page":{"document_bytes":9,"object_bytes":[5],"object_origins":[2]}}]"#,
            "traffic[0].page.object_origins",
        ),
        (
            r#"[{"kind":"pages","users":1,"page":{"document_bytes":9,"object_bytes":[5,0],"object_origins":[0,0]}}]"#,
            "traffic[0].page.object_bytes",
        ),
        (
            r#"[{"kind":"pages","users":1,"page":{"document_bytes":9,"object_bytes":[5],"object_origins":[]}}]"#,
            "traffic[0].page.object_origins",
        ),
    ] {
        let e = Scenario::from_json(&json(traffic)).unwrap_err();
        assert!(e.starts_with(field), "{traffic}: {e}");
    }
    for traffic in [
        r#"[{"kind":"pages","users":1,"protocol":"h3"}]"#,
        r#"[{"kind":"pages","users":1,"device":"tablet"}]"#,
        r#"[{"kind":"pages","users":1,"colour":"red"}]"#,
    ] {
        assert!(Scenario::from_json(&json(traffic)).is_err(), "{traffic}");
    }
    let ok = json(r#"[{"kind":"pages","users":2,"protocol":"http/1.1","device":"desktop"}]"#);
    let sc = Scenario::from_json(&ok).unwrap();
    assert!(Simulation::new(sc).is_ok());
}

/// Page users on both sides beside a greedy download, through FIFO and FQ-CoDel at 10 Mb/s
/// with drops: every packet sent is delivered, dropped, lost or still in the network, and
/// pages still complete with all their bytes.
#[test]
fn packets_are_conserved_with_pages_beside_a_bulk_download() {
    for queue in [
        serde_json::json!({"kind": "droptail", "limit": 50}),
        serde_json::json!({"kind": "fq_codel"}),
    ] {
        let mut sc = greedy_10mbps(2, 20.0, 4);
        sc.warmup_s = 2.0;
        sc.measure.connections = true;
        sc.queue = queue_cfg(queue).unwrap();
        let mut left = users(3, PageProtocol::Http2, None);
        left.think_s = Some(1.0);
        let mut right = users(3, PageProtocol::Http11, None);
        right.client_side = Side::Right;
        right.think_s = Some(1.0);
        sc.traffic.push(TrafficConfig::Pages(left));
        sc.traffic.push(TrafficConfig::Pages(right));
        let (sim, t) = run(sc);
        let (dropped, _) = assert_packets_conserved(&sim, &t);
        assert!(dropped > 0);
        let p = table(&t, "pages");
        let done = bools(p, "completed");
        let (bytes, got) = (u64s(p, "bytes"), u64s(p, "bytes_delivered"));
        assert!(done.iter().filter(|&&d| d).count() >= 5);
        for i in (0..p.rows()).filter(|&i| done[i]) {
            assert_eq!(bytes[i], got[i]);
        }
    }
}

/// A fixed page of many requests for many users would hold more connections than the
/// simulation has slots: refused on `users`, with the most users that fit (2^25 / 401 =
/// 83,676).
#[test]
fn too_many_connections_are_refused_on_users() {
    let n = 400;
    let page = serde_json::json!({
        "document_bytes": 9, "object_bytes": vec![1; n], "object_origins": vec![0; n]
    });
    let json = |users: u32| {
        let mut v: serde_json::Value = serde_json::to_value(base(1.0)).unwrap();
        v["traffic"] = serde_json::json!([{"kind": "pages", "users": users, "page": page}]);
        v.to_string()
    };
    let e = Scenario::from_json(&json(100_000)).unwrap_err();
    assert!(
        e.starts_with("traffic[0].users = 100000: expected at most 83676 users"),
        "{e}"
    );
    assert!(Scenario::from_json(&json(83_676)).is_ok());
}
