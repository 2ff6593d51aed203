//! Linux's two window-growth steps (`net/ipv4/tcp_cong.c`), shared by the Linux congestion
//! controls (`tcp/cong.rs`) and TCP Prague (`tcp/prague/`).

/// Linux `tcp_slow_start`: cwnd grows by the segments ACKed, up to ssthresh; returns the
/// ACKed segments left over for congestion avoidance. `cwnd < ssthresh` on entry.
pub fn slow_start(cwnd: &mut u32, ssthresh: u32, acked: u32, clamp: u32) -> u32 {
    let grown = cwnd.saturating_add(acked).min(ssthresh);
    let left = acked - (grown - *cwnd);
    *cwnd = grown.min(clamp);
    left
}

/// Linux `tcp_cong_avoid_ai`: one more segment for every `w` segments ACKed, counted in
/// `cnt` (`snd_cwnd_cnt`); credit gathered while `w` was larger is applied one segment at a
/// time.
pub fn cong_avoid_ai(cwnd: &mut u32, cnt: &mut u32, w: u32, acked: u32, clamp: u32) {
    let w = w.max(1);
    if *cnt >= w {
        *cnt = 0;
        *cwnd = cwnd.saturating_add(1);
    }
    *cnt += acked;
    if *cnt >= w {
        let delta = *cnt / w;
        *cnt -= delta * w;
        *cwnd = cwnd.saturating_add(delta);
    }
    *cwnd = (*cwnd).min(clamp);
}
