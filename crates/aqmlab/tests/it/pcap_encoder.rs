//! The pcap encoder (`aqmlab::capture`) checked by an independent dissector: a small capture
//! (a handshake with ECN setup, data with ECT(0)/CE/ECT(1), an ACK with ECE, SACK blocks and
//! timestamps, a CWR segment, an AE-flagged segment, a truncated packet, a FIN and two UDP
//! datagrams) is written to a file and read back by Wireshark's `tshark`, which must decode
//! every frame without a malformed packet or an error, find every checksum good, and show the
//! fields that were written.
//!
//! `tshark` is found as `$AQMLAB_TSHARK` or on PATH (`make test-rust` installs it when it can);
//! without it the test says so and passes, having checked only what it can alone.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

use aqmlab::capture::{file_header, write_record, TcpOptions, WirePacket, LINKTYPE_RAW};
use aqmlab::packet::{flags, Ecn, Proto};

const SNAPLEN: u32 = 256;
const CLIENT: [u8; 4] = [10, 0, 0, 1];
const SERVER: [u8; 4] = [10, 0, 1, 1];
const CPORT: u16 = 40_000;
const SPORT: u16 = 47_001;

fn seg(t: u64, to_server: bool, seq: u32, ack: u32, fl: u8, ecn: Ecn, payload: u32) -> WirePacket {
    let (src, dst, sport, dport) = if to_server {
        (CLIENT, SERVER, CPORT, SPORT)
    } else {
        (SERVER, CLIENT, SPORT, CPORT)
    };
    WirePacket {
        t,
        src,
        dst,
        proto: Proto::Tcp,
        sport,
        dport,
        ip_id: (t / 1000) as u16,
        ttl: 64,
        ecn,
        payload,
        seq,
        ack,
        flags: fl,
        window: 502,
        options: TcpOptions::default(),
    }
}

fn ts(a: u32, b: u32) -> TcpOptions {
    TcpOptions {
        timestamps: Some((a, b)),
        ..Default::default()
    }
}

/// The packets of the capture, in order.
fn packets() -> Vec<WirePacket> {
    use flags::*;
    let c0 = 0xfffff000u32; // the client's ISS, close to wrapping: seq_raw must show it as is
    let s0 = 123_456_789u32;
    let ms = 1_000_000u64;
    let mut v = Vec::new();
    // 1. ECN-setup SYN (RFC 3168 §6.1.1): ECE | CWR, Linux's SYN options.
    let mut p = seg(ms, true, c0, 0, SYN | ECE | CWR, Ecn::NotEct, 0);
    p.window = 64_240;
    p.options = TcpOptions {
        mss: Some(1460),
        sack_permitted: true,
        wscale: Some(7),
        timestamps: Some((1000, 0)),
        ..Default::default()
    };
    v.push(p);
    // 2. ECN-setup SYN-ACK: ECE; no timestamps, so SACK-permitted is NOP NOP padded.
    let mut p = seg(
        21 * ms + 7,
        false,
        s0,
        c0 + 1,
        SYN | ACK | ECE,
        Ecn::NotEct,
        0,
    );
    p.window = 65_160;
    p.options = TcpOptions {
        mss: Some(1400),
        sack_permitted: true,
        wscale: Some(9),
        ..Default::default()
    };
    v.push(p);
    // 3. The handshake's ACK.
    let mut p = seg(41 * ms, true, c0 + 1, s0 + 1, ACK, Ecn::NotEct, 0);
    p.options = ts(1020, 0);
    v.push(p);
    // 4-5. Data with ECT(0), then marked CE.
    let mut p = seg(41 * ms + 1, true, c0 + 1, s0 + 1, ACK, Ecn::Ect0, 100);
    p.options = ts(1020, 0);
    v.push(p);
    let mut p = seg(41 * ms + 2, true, c0 + 101, s0 + 1, ACK, Ecn::Ce, 100);
    p.options = ts(1020, 0);
    v.push(p);
    // 6. An ACK with ECE, timestamps and four SACK blocks: three fit with timestamps; the
    //    sequence space wraps between them.
    let mut p = seg(
        61 * ms + 999_999_999,
        false,
        s0 + 1,
        c0 + 101,
        ACK | ECE,
        Ecn::NotEct,
        0,
    );
    p.options = TcpOptions {
        timestamps: Some((2041, 1020)),
        sack: [
            (c0 + 201, c0 + 301),
            (c0 + 401, c0 + 501),
            (c0 + 4001, 905), // wraps: 0xfffff000 + 4001 = 0xa1 (mod 2^32)
            (c0 + 701, c0 + 801),
        ],
        sack_n: 4,
        ..Default::default()
    };
    v.push(p);
    // 7. CWR on data with ECT(0).
    let mut p = seg(62 * ms, true, c0 + 101, s0 + 1, ACK | CWR, Ecn::Ect0, 100);
    p.options = ts(1041, 2041);
    v.push(p);
    // 8. AE (AccECN's third ACE bit, RFC 9768), with ECE and CWR: ACE = 7.
    let mut p = seg(
        63 * ms,
        false,
        s0 + 1,
        c0 + 201,
        ACK | AE | ECE | CWR,
        Ecn::Ect1,
        0,
    );
    p.options = ts(2043, 1041);
    v.push(p);
    // 9. AE alone, on data.
    let mut p = seg(64 * ms, false, s0 + 1, c0 + 201, ACK | AE, Ecn::Ect1, 20);
    p.options = ts(2044, 1041);
    v.push(p);
    // 10. A segment longer than the snap length: 1000 payload bytes, 256 captured.
    let mut p = seg(65 * ms, true, c0 + 201, s0 + 21, ACK, Ecn::Ect1, 1000);
    p.options = ts(1045, 2044);
    v.push(p);
    // 11. FIN.
    let mut p = seg(66 * ms, true, c0 + 1201, s0 + 21, FIN | ACK, Ecn::NotEct, 0);
    p.options = ts(1046, 2044);
    v.push(p);
    // 12. UDP with ECT(1).
    v.push(WirePacket {
        t: 3_000_000_000 + 5,
        src: CLIENT,
        dst: SERVER,
        proto: Proto::Udp,
        sport: 40_001,
        dport: 47_002,
        ip_id: 7,
        ttl: 63,
        ecn: Ecn::Ect1,
        payload: 50,
        ..Default::default()
    });
    // 13. UDP whose checksum computes to 0, so is written as 0xffff (RFC 768): the port is
    //     found by trying.
    let mut p = WirePacket {
        dport: 0,
        ecn: Ecn::NotEct,
        payload: 3,
        ..v[11]
    };
    p.t += 1;
    loop {
        let mut b = Vec::new();
        write_record(&mut b, &p, SNAPLEN);
        if b[16 + 26..16 + 28] == [0xff, 0xff] {
            break;
        }
        p.dport += 1;
    }
    v.push(p);
    v
}

fn tshark() -> Option<PathBuf> {
    let exe =
        std::env::var_os("AQMLAB_TSHARK").map_or_else(|| PathBuf::from("tshark"), PathBuf::from);
    match Command::new(&exe).arg("--version").output() {
        Ok(o) if o.status.success() => Some(exe),
        _ => None,
    }
}

const FIELDS: &[&str] = &[
    "frame.number",
    "frame.len",
    "frame.cap_len",
    "frame.time_epoch",
    "ip.version",
    "ip.hdr_len",
    "ip.dsfield.dscp",
    "ip.dsfield.ecn",
    "ip.len",
    "ip.id",
    "ip.flags.df",
    "ip.ttl",
    "ip.proto",
    "ip.src",
    "ip.dst",
    "ip.checksum.status",
    "tcp.srcport",
    "tcp.dstport",
    "tcp.seq_raw",
    "tcp.ack_raw",
    "tcp.hdr_len",
    "tcp.len",
    "tcp.flags",
    "tcp.flags.ae",
    "tcp.flags.urg",
    "tcp.window_size_value",
    "tcp.urgent_pointer",
    "tcp.checksum.status",
    "tcp.option_kind",
    "tcp.options.mss_val",
    "tcp.options.wscale.shift",
    "tcp.options.timestamp.tsval",
    "tcp.options.timestamp.tsecr",
    "tcp.options.sack.count",
    "tcp.options.sack_le",
    "tcp.options.sack_re",
    "udp.srcport",
    "udp.dstport",
    "udp.length",
    "udp.checksum",
    "udp.checksum.status",
    "_ws.malformed",
    "_ws.expert.severity",
    "_ws.expert.message",
];

fn ecn_bits(e: Ecn) -> u8 {
    match e {
        Ecn::NotEct => 0,
        Ecn::Ect1 => 1,
        Ecn::Ect0 => 2,
        Ecn::Ce => 3,
    }
}

#[test]
fn tshark_decodes_what_the_encoder_wrote() {
    let pkts = packets();
    let mut file = file_header(SNAPLEN).to_vec();
    let mut lens = Vec::new();
    for p in &pkts {
        let n = write_record(&mut file, p, SNAPLEN);
        lens.push(n);
    }
    assert_eq!(file.len(), 24 + lens.iter().sum::<usize>());
    assert_eq!(
        u32::from_le_bytes(file[20..24].try_into().unwrap()),
        LINKTYPE_RAW
    );

    let Some(exe) = tshark() else {
        eprintln!(
            "note: tshark not found (PATH or AQMLAB_TSHARK); the pcap encoder's capture was \
             written but not dissected"
        );
        return;
    };
    let path =
        std::env::temp_dir().join(format!("aqmlab-pcap-encoder-{}.pcap", std::process::id()));
    std::fs::write(&path, &file).unwrap();
    let mut cmd = Command::new(&exe);
    cmd.arg("-n").arg("-r").arg(&path);
    for o in [
        "tcp.check_checksum:TRUE",
        "ip.check_checksum:TRUE",
        "udp.check_checksum:TRUE",
        "tcp.relative_sequence_numbers:FALSE",
        "tcp.analyze_sequence_numbers:FALSE",
    ] {
        cmd.arg("-o").arg(o);
    }
    cmd.args([
        "-T",
        "fields",
        "-E",
        "separator=/t",
        "-E",
        "occurrence=a",
        "-E",
        "aggregator=,",
    ]);
    for f in FIELDS {
        cmd.arg("-e").arg(f);
    }
    let out = cmd.output().expect("tshark runs");
    let _ = std::fs::remove_file(&path);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tshark failed: {stderr}");
    let rows: Vec<HashMap<&str, &str>> = stdout
        .lines()
        .map(|l| FIELDS.iter().copied().zip(l.split('\t')).collect())
        .collect();
    assert_eq!(
        rows.len(),
        pkts.len(),
        "every frame decodes:\n{stdout}\n{stderr}"
    );
    for (i, (p, row)) in pkts.iter().zip(&rows).enumerate() {
        check_frame(i, p, row, lens[i] - 16);
    }

    // Nothing malformed or cut short in a header, by display filter (a second, independent
    // look at the same file).
    std::fs::write(&path, &file).unwrap();
    let out = Command::new(&exe)
        .arg("-n")
        .arg("-r")
        .arg(&path)
        .args([
            "-Y",
            "_ws.malformed or _ws.short or _ws.expert.severity >= 0x600000",
        ])
        .args(["-T", "fields", "-e", "frame.number"])
        .output()
        .expect("tshark runs");
    let _ = std::fs::remove_file(&path);
    let bad = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && bad.trim().is_empty(),
        "frames with problems: {bad}"
    );
}

/// One frame as tshark saw it against the packet that was written.
fn check_frame(i: usize, p: &WirePacket, row: &HashMap<&str, &str>, incl_len: usize) {
    let frame = i + 1;
    let get = |k: &str| *row.get(k).unwrap_or(&"");
    let num = |k: &str| -> u64 {
        let v = get(k);
        let r = match v.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16),
            None => v.parse(),
        };
        r.unwrap_or_else(|_| panic!("frame {frame}: {k} = {v:?} is not a number: {row:?}"))
    };
    let list = |k: &str| -> Vec<u64> {
        let v = get(k);
        if v.is_empty() {
            Vec::new()
        } else {
            v.split(',').map(|x| x.parse().unwrap()).collect()
        }
    };
    let ctx = format!("frame {frame}: {row:?}");
    let tcp = p.proto == Proto::Tcp;

    // Frame: lengths and the nanosecond timestamp.
    assert_eq!(num("frame.number"), frame as u64, "{ctx}");
    assert_eq!(num("frame.cap_len") as usize, incl_len, "{ctx}");
    assert!(incl_len <= SNAPLEN as usize, "{ctx}");
    let want_t = format!("{}.{:09}", p.t / 1_000_000_000, p.t % 1_000_000_000);
    assert_eq!(get("frame.time_epoch"), want_t, "{ctx}");

    // IPv4.
    let l4_hlen = if tcp { num("tcp.hdr_len") } else { 8 };
    let orig = 20 + l4_hlen + u64::from(p.payload);
    assert_eq!(num("frame.len"), orig, "{ctx}");
    assert_eq!(num("ip.len"), orig, "{ctx}");
    assert_eq!((num("ip.version"), num("ip.hdr_len")), (4, 20), "{ctx}");
    assert_eq!(num("ip.dsfield.dscp"), 0, "{ctx}");
    assert_eq!(num("ip.dsfield.ecn"), u64::from(ecn_bits(p.ecn)), "{ctx}");
    assert_eq!(num("ip.id"), u64::from(p.ip_id), "{ctx}");
    assert_eq!(num("ip.flags.df"), 1, "{ctx}");
    assert_eq!(num("ip.ttl"), u64::from(p.ttl), "{ctx}");
    assert_eq!(num("ip.proto"), if tcp { 6 } else { 17 }, "{ctx}");
    let addr = |a: [u8; 4]| format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3]);
    assert_eq!(get("ip.src"), addr(p.src), "{ctx}");
    assert_eq!(get("ip.dst"), addr(p.dst), "{ctx}");
    // Checksum status: 1 good (0 bad, 2 unverified).
    assert_eq!(num("ip.checksum.status"), 1, "{ctx}");

    // No warning or error (0x600000, 0x800000: a bad checksum or a malformed packet is one).
    for s in get("_ws.expert.severity")
        .split(',')
        .filter(|s| !s.is_empty())
    {
        assert!(s.parse::<u64>().unwrap() < 0x60_0000, "{ctx}");
    }
    assert_eq!(get("_ws.malformed"), "", "{ctx}");

    if !tcp {
        assert_eq!(get("tcp.srcport"), "", "{ctx}");
        assert_eq!(num("udp.srcport"), u64::from(p.sport), "{ctx}");
        assert_eq!(num("udp.dstport"), u64::from(p.dport), "{ctx}");
        assert_eq!(num("udp.length"), 8 + u64::from(p.payload), "{ctx}");
        assert_eq!(num("udp.checksum.status"), 1, "{ctx}");
        assert_ne!(num("udp.checksum"), 0, "{ctx}");
        return;
    }

    // TCP: ports, raw sequence numbers, lengths, flags (AE as tcp.flags.ae, 0x100 of the
    // 12-bit flags field; URG never), window, checksum.
    assert_eq!(num("tcp.srcport"), u64::from(p.sport), "{ctx}");
    assert_eq!(num("tcp.dstport"), u64::from(p.dport), "{ctx}");
    assert_eq!(num("tcp.seq_raw"), u64::from(p.seq), "{ctx}");
    assert_eq!(num("tcp.ack_raw"), u64::from(p.ack), "{ctx}");
    assert_eq!(num("tcp.len"), u64::from(p.payload), "{ctx}");
    let ae = p.flags & flags::AE != 0;
    let want_flags = u64::from(p.flags & !flags::AE) | if ae { 0x100 } else { 0 };
    assert_eq!(num("tcp.flags"), want_flags, "{ctx}");
    assert_eq!(num("tcp.flags.ae"), u64::from(ae), "{ctx}");
    assert_eq!(num("tcp.flags.urg"), 0, "{ctx}");
    assert_eq!(num("tcp.urgent_pointer"), 0, "{ctx}");
    assert_eq!(num("tcp.window_size_value"), u64::from(p.window), "{ctx}");
    // The truncated segment's checksum cannot be verified from 256 bytes (2, unverified); the
    // unit tests check that it is the full packet's.
    let truncated = (incl_len as u64) < orig;
    assert_eq!(
        num("tcp.checksum.status"),
        if truncated { 2 } else { 1 },
        "{ctx}"
    );

    // Options: kinds in Linux's order, values as written, the SACK blocks that fit.
    let o = &p.options;
    let mut kinds = Vec::new();
    if o.mss.is_some() {
        kinds.push(2);
    }
    match (o.timestamps.is_some(), o.sack_permitted) {
        (true, true) => kinds.extend([4, 8]),
        (true, false) => kinds.extend([1, 1, 8]),
        (false, true) => kinds.extend([1, 1, 4]),
        (false, false) => {},
    }
    if o.wscale.is_some() {
        kinds.extend([1, 3]);
    }
    let fit = if o.sack_n > 0 {
        kinds.extend([1, 1, 5]);
        usize::from(o.sack_n).min(if o.timestamps.is_some() { 3 } else { 4 })
    } else {
        0
    };
    assert_eq!(list("tcp.option_kind"), kinds, "{ctx}");
    assert_eq!((num("tcp.hdr_len") - 20) % 4, 0, "{ctx}");
    let opt = |v: Option<u64>| v.into_iter().collect::<Vec<_>>();
    assert_eq!(
        list("tcp.options.mss_val"),
        opt(o.mss.map(u64::from)),
        "{ctx}"
    );
    assert_eq!(
        list("tcp.options.wscale.shift"),
        opt(o.wscale.map(u64::from)),
        "{ctx}"
    );
    let tsval = opt(o.timestamps.map(|t| u64::from(t.0)));
    let tsecr = opt(o.timestamps.map(|t| u64::from(t.1)));
    assert_eq!(list("tcp.options.timestamp.tsval"), tsval, "{ctx}");
    assert_eq!(list("tcp.options.timestamp.tsecr"), tsecr, "{ctx}");
    let le: Vec<u64> = o.sack[..fit].iter().map(|b| u64::from(b.0)).collect();
    let re: Vec<u64> = o.sack[..fit].iter().map(|b| u64::from(b.1)).collect();
    assert_eq!(list("tcp.options.sack_le"), le, "{ctx}");
    assert_eq!(list("tcp.options.sack_re"), re, "{ctx}");
    if fit > 0 {
        assert_eq!(num("tcp.options.sack.count"), fit as u64, "{ctx}");
    }
}
