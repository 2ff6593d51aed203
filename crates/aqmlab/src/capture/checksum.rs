//! The Internet checksum (RFC 791 §3.1 "Header Checksum", RFC 1071 §4.1): the 16-bit one's
//! complement of the one's complement sum of the 16-bit big-endian words covered.
//!
//! The sum is kept in a wide accumulator and folded once at the end (RFC 1071 §2 (D),
//! deferred carries), so adding a pseudo-header, a header and more header bytes is one pass over
//! each. Zero bytes add nothing to the sum, which is why a zero payload needs no pass at all.

/// Adds `bytes`, as big-endian 16-bit words (an odd last byte padded with a zero on the right,
/// RFC 1071 §4.1), to the running sum `acc`.
#[inline]
pub fn add(mut acc: u64, bytes: &[u8]) -> u64 {
    let mut words = bytes.chunks_exact(2);
    for w in &mut words {
        acc += u64::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [last] = words.remainder() {
        acc += u64::from(*last) << 8;
    }
    acc
}

/// Folds the carries of a running sum into 16 bits and complements it: the checksum to write.
#[inline]
pub fn finish(mut acc: u64) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// The checksum of `bytes` alone.
#[inline]
pub fn checksum(bytes: &[u8]) -> u16 {
    finish(add(0, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example_sum() {
        // RFC 1071 §3 "Numerical Examples": the bytes 00 01 f2 03 f4 f5 f6 f7 sum to ddf2
        // (one's complement), so the checksum is !ddf2 = 220d.
        let b = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(checksum(&b), !0xddf2);
        assert_eq!(checksum(&b), 0x220d);
    }

    #[test]
    fn a_correct_checksum_verifies_to_zero() {
        let mut b = [
            0x45u8, 0, 0, 0x73, 0, 0, 0x40, 0, 0x40, 0x11, 0, 0, 192, 168, 0, 1, 192, 168, 0, 199,
        ];
        let c = checksum(&b);
        b[10..12].copy_from_slice(&c.to_be_bytes());
        assert_eq!(checksum(&b), 0);
    }

    #[test]
    fn odd_length_pads_on_the_right() {
        assert_eq!(checksum(&[0x12]), !0x1200);
        assert_eq!(checksum(&[0x12, 0x34, 0x56]), !(0x1234 + 0x5600));
    }
}
