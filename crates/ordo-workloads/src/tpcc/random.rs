//! TPC-C's random functions (clause 2.1.6 and 4.3.2): NURand, random strings, last names.

use rand::Rng;

/// The run-time constants C of NURand (clause 2.1.6), one per A.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct NuRandC {
    /// A = 255 (customer last names).
    pub c_last: u32,
    /// A = 1023 (customer ids).
    pub c_id: u32,
    /// A = 8191 (item ids).
    pub ol_i_id: u32,
}

impl NuRandC {
    /// The constants used during population.
    pub const LOAD: NuRandC = NuRandC {
        c_last: 157,
        c_id: 259,
        ol_i_id: 7911,
    };
    /// The run-time constants: C_LAST differs from the load value by 65..=119, not 96 or 112
    /// (clause 2.1.6.1), here by 66.
    pub const RUN: NuRandC = NuRandC {
        c_last: 223,
        c_id: 259,
        ol_i_id: 7911,
    };
}

/// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y − x + 1)) + x.
#[inline]
pub fn nurand(rng: &mut impl Rng, a: u32, c: u32, x: u32, y: u32) -> u32 {
    (((rng.gen_range(0..=a) | rng.gen_range(x..=y)) + c) % (y - x + 1)) + x
}

const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// Writes last name number `n` (0..=999) into `out`: three syllables, one per decimal digit.
pub fn last_name(n: u32, out: &mut Vec<u8>) {
    out.clear();
    for d in [n / 100, (n / 10) % 10, n % 10] {
        out.extend_from_slice(SYLLABLES[d as usize].as_bytes());
    }
}

const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// A random alphanumeric string of `lo..=hi` characters (clause 4.3.2.2 a-string).
pub fn astring(rng: &mut impl Rng, lo: usize, hi: usize, out: &mut Vec<u8>) {
    out.clear();
    let n = rng.gen_range(lo..=hi);
    out.extend((0..n).map(|_| ALNUM[rng.gen_range(0..ALNUM.len())]));
}

/// A random numeric string of `lo..=hi` digits (n-string).
pub fn nstring(rng: &mut impl Rng, lo: usize, hi: usize, out: &mut Vec<u8>) {
    out.clear();
    let n = rng.gen_range(lo..=hi);
    out.extend((0..n).map(|_| b'0' + rng.gen_range(0..10u8)));
}

/// An a-string of 26..=50 characters with "ORIGINAL" at a random position in 10% of rows (I_DATA,
/// S_DATA; clause 4.3.3.1).
pub fn data_original(rng: &mut impl Rng, out: &mut Vec<u8>) {
    astring(rng, 26, 50, out);
    if rng.gen_range(0..10) == 0 {
        let at = rng.gen_range(0..=out.len() - 8);
        out[at..at + 8].copy_from_slice(b"ORIGINAL");
    }
}

/// A zip code: 4 random digits then "11111".
pub fn zip(rng: &mut impl Rng, out: &mut Vec<u8>) {
    nstring(rng, 4, 4, out);
    out.extend_from_slice(b"11111");
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    #[test]
    fn last_names_follow_the_syllable_table() {
        let mut s = Vec::new();
        last_name(371, &mut s);
        assert_eq!(s, b"PRICALLYOUGHT");
        last_name(0, &mut s);
        assert_eq!(s, b"BARBARBAR");
        last_name(999, &mut s);
        assert_eq!(s, b"EINGEINGEING");
    }

    #[test]
    fn nurand_stays_in_range_and_is_skewed() {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut hits = vec![0u32; 3001];
        for _ in 0..300_000 {
            let c = nurand(&mut rng, 1023, 259, 1, 3000);
            assert!((1..=3000).contains(&c));
            hits[c as usize] += 1;
        }
        let max = *hits.iter().max().unwrap();
        let min = *hits[1..].iter().min().unwrap();
        assert!(
            max > 4 * min.max(1),
            "NURand should be non-uniform: {min}..{max}"
        );
    }

    #[test]
    fn run_constant_differs_as_the_spec_requires() {
        let delta = NuRandC::RUN.c_last.abs_diff(NuRandC::LOAD.c_last);
        assert!((65..=119).contains(&delta) && delta != 96 && delta != 112);
    }
}
