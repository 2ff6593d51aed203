//! How tc turns `tc qdisc add … red limit … min … max … avpkt … burst … probability …
//! bandwidth …` into the kernel's parameters (iproute2 `tc/q_red.c` `red_parse_opt`,
//! `tc/tc_red.c` `tc_red_eval_ewma`, `tc_red_eval_P`, `tc_red_eval_idle_damping`,
//! `tc/tc_core.c` `tc_calc_xmittime`), in tc's own arithmetic (f64 where tc uses `double`,
//! its truncations where it converts to integers).
//!
//! * defaults (`red_parse_opt`): `max = 3·min` if only min is given, `limit/4` if neither;
//!   `min = max/3`; `burst = (2·min + max)/(3·avpkt)` packets; `probability` 0.02;
//!   `bandwidth` 10 Mbit;
//! * `Wlog`: the smallest `w` in 1..31 with `burst + 1 − min/avpkt ≤ (1 − (1 − W)^burst)/W`,
//!   `W = 2^−w` (Floyd & Jacobson's burst bound);
//! * `Plog`: the number of doublings of `probability/(max − min)` until it exceeds 1;
//! * `max_P = probability·2³²` (u32), sent as `TCA_RED_MAX_P`, which the kernel then uses
//!   instead of the `Plog` form;
//! * the idle table: with `x` = the transmission time of `avpkt` at `bandwidth` in psched
//!   ticks (µs truncated, × `tick_in_usec` = 15.625, truncated: tc reads 1000/64 from the
//!   kernel's `/proc/net/psched`), `lW = −ln(1 − W)/x`, `Scell_log` = the smallest `c`
//!   with `31/lW / 2^c < 512`, and `Stab[i] = min(⌊(i << c)·lW⌋, 31)`, `Stab[0] = 0`,
//!   `Stab[255] = 31`. (The kernel indexes the table by µs of idle time, tc builds it in
//!   ticks: both are followed as they are.)

/// psched ticks per µs as tc computes it from Linux's `/proc/net/psched` (`1000 64 1000000`:
/// `t2us / us2t · clock_res / 10⁶`).
pub const TICK_IN_USEC: f64 = 1000.0 / 64.0;

/// Why tc refuses the parameters (its messages, shortened).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TcRedError {
    /// `tc_red_eval_ewma`: `burst + 1 − min/avpkt < 1`; the smallest burst tc suggests.
    BurstTooSmall { at_least: u32 },
    /// `tc_red_eval_ewma`: no `Wlog` below 32 satisfies the burst bound.
    NoEwma,
    /// `tc_red_eval_P`: `max ≤ min`, or the probability needs 32 or more doublings.
    NoPlog,
    /// `tc_red_eval_idle_damping`: no `Scell_log` below 32.
    NoScellLog,
}

/// `tc_red_eval_ewma(qmin, burst, avpkt)`.
pub fn eval_ewma(qmin: u32, burst: u32, avpkt: u32) -> Result<u8, TcRedError> {
    let a = burst as f64 + 1.0 - qmin as f64 / avpkt as f64;
    if a < 1.0 {
        return Err(TcRedError::BurstTooSmall {
            at_least: 1 + qmin / avpkt,
        });
    }
    let mut w = 0.5f64;
    for wlog in 1..32u8 {
        if a <= (1.0 - (1.0 - w).powf(burst as f64)) / w {
            return Ok(wlog);
        }
        w /= 2.0;
    }
    Err(TcRedError::NoEwma)
}

/// `tc_red_eval_P(qmin, qmax, prob)`.
pub fn eval_p(qmin: u32, qmax: u32, prob: f64) -> Result<u8, TcRedError> {
    // tc: `int i = qmax − qmin`.
    let i = qmax.wrapping_sub(qmin) as i32;
    if i <= 0 {
        return Err(TcRedError::NoPlog);
    }
    let mut p = prob / i as f64;
    for plog in 0..32u8 {
        if p > 1.0 {
            return Ok(plog);
        }
        p *= 2.0;
    }
    Err(TcRedError::NoPlog)
}

/// `tc_calc_xmittime(rate, size)`: µs (truncated to an integer, tc's `long`), then ticks
/// (truncated, tc's `unsigned`).
pub fn xmit_ticks(rate_bytes_per_s: u32, size: u32) -> u32 {
    let us = (1e6 * (size as f64 / rate_bytes_per_s as f64)) as i64;
    (us as f64 * TICK_IN_USEC) as u32
}

/// C's conversion of a `double` to a byte as gcc emits it on x86-64 (a 32-bit truncating
/// conversion, `cvttsd2si`, whose out-of-range and NaN result is `INT_MIN`, then the low
/// byte).
fn c_byte(x: f64) -> u8 {
    let v = if x > -2_147_483_649.0 && x < 2_147_483_648.0 {
        x as i32
    } else {
        i32::MIN
    };
    v as u8
}

/// C's `1 << n` on an `int` (wrapping into the sign bit at 31, as gcc's code does), as a
/// double.
fn c_pow2(n: u32) -> f64 {
    1i32.wrapping_shl(n) as f64
}

/// `tc_red_eval_idle_damping(Wlog, avpkt, rate)`: `Scell_log` and the table. tc's C is
/// followed where it leaves the ordinary range (an `avpkt` sent in under a µs gives a zero
/// transmission time, an infinite `lW`, `Scell_log` 0 and a table of zeros; `1 << 31` is
/// negative, which ends the search at 31), so that every parameter set tc accepts is
/// accepted here with the table tc sends.
pub fn eval_idle_damping(
    wlog: u8,
    avpkt: u32,
    rate_bytes_per_s: u32,
) -> Result<(u8, [u8; 256]), TcRedError> {
    let xmit = xmit_ticks(rate_bytes_per_s, avpkt) as f64;
    let lw = -(1.0 - 1.0 / c_pow2(wlog as u32)).ln() / xmit;
    let maxtime = 31.0 / lw;
    let Some(clog) = (0..32u32).find(|&c| maxtime / c_pow2(c) < 512.0) else {
        return Err(TcRedError::NoScellLog);
    };
    let mut stab = [0u8; 256];
    for (i, s) in stab.iter_mut().enumerate().take(255).skip(1) {
        // tc: `sbuf[i] = (i << clog) * lW`, then capped at 31.
        let v = c_byte(((i as i32).wrapping_shl(clog)) as f64 * lw);
        *s = v.min(31);
    }
    stab[255] = 31;
    Ok((clog as u8, stab))
}

/// tc's `max_P = probability · 2³²` stored in a u32 (`TCA_RED_MAX_P`).
pub fn max_p(probability: f64) -> u32 {
    (probability * 4_294_967_296.0) as u64 as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ewma_worked_example() {
        // min 30 000, avpkt 1000, burst (2·30000 + 90000)/3000 = 50: a = 50 + 1 − 30 = 21.
        // (1 − (1 − W)^50)/W: W = 1/32 → 25.5 ≥ 21 but W = 1/16 → 15.4 < 21: Wlog 5.
        assert_eq!(eval_ewma(30_000, 50, 1000), Ok(5));
        // A burst below min/avpkt: tc suggests 1 + min/avpkt.
        assert_eq!(
            eval_ewma(30_000, 20, 1000),
            Err(TcRedError::BurstTooSmall { at_least: 31 })
        );
    }

    #[test]
    fn plog_and_max_p_worked_example() {
        // 0.02/60 000 = 3.33e-7: 2^22·3.33e-7 = 1.398 > 1 and 2^21· = 0.699: Plog 22.
        assert_eq!(eval_p(30_000, 90_000, 0.02), Ok(22));
        assert_eq!(eval_p(30_000, 30_000, 0.02), Err(TcRedError::NoPlog));
        // 0.02·2³² = 85 899 345.92 → 85 899 345.
        assert_eq!(max_p(0.02), 85_899_345);
    }

    #[test]
    fn idle_table_worked_example() {
        // 1000 B at 10 Mbit (1 250 000 B/s): 800 µs = 12 500 ticks. Wlog 5:
        // lW = −ln(31/32)/12500 = 2.5400e-6; 31/lW = 1.2205e7 ticks; /2^c < 512 first at
        // c = 15 (372.4). Stab[i] = ⌊i·32768·lW⌋ = ⌊i·0.08323⌋: Stab[12] = 0, Stab[13] = 1,
        // Stab[254] = 21.
        assert_eq!(xmit_ticks(1_250_000, 1000), 12_500);
        let (clog, stab) = eval_idle_damping(5, 1000, 1_250_000).unwrap();
        assert_eq!(clog, 15);
        assert_eq!(
            (stab[0], stab[12], stab[13], stab[254], stab[255]),
            (0, 0, 1, 21, 31)
        );
        // Truncations: 1500 B at 3 Mbit/s (375 000 B/s) is 4000 µs = 62 500 ticks exactly;
        // 1000 B at 7 Mbit/s (875 000 B/s) is 1142.857 µs → 1142 → 17 843.75 → 17 843.
        assert_eq!(xmit_ticks(375_000, 1500), 62_500);
        assert_eq!(xmit_ticks(875_000, 1000), 17_843);
        // 64 B at 1000 Mbit/s is 0.512 µs, 0 µs for tc: Scell_log 0 and a table of zeros.
        assert_eq!(xmit_ticks(125_000_000, 64), 0);
        let (clog, stab) = eval_idle_damping(4, 64, 125_000_000).unwrap();
        assert_eq!((clog, stab[1], stab[254], stab[255]), (0, 0, 0, 31));
        // 9000 B at 1 Mbit/s with Wlog 16: 31/lW = 2.29e12 ticks, still ≥ 512·2^30; C's
        // `1 << 31` is negative and ends the search at 31; (i << 31)·lW rounds to 0.
        let (clog, stab) = eval_idle_damping(16, 9000, 125_000).unwrap();
        assert_eq!((clog, stab[1], stab[2], stab[255]), (31, 0, 0, 31));
    }
}
