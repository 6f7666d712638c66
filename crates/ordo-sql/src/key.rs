//! Order-preserving encodings of SQL values into Ordo's `u64` keys.
//!
//! Storage keys are `u64` compared as unsigned integers, so a key encoding must keep the order of the
//! values it encodes (range scans on keys are range scans on values):
//!
//! * an integer flips its sign bit (`i64::MIN → 0`, `-1 → 2^63 - 1`, `0 → 2^63`) — exact;
//! * a float maps to its IEEE bits, sign-flipped for positives and all-flipped for negatives — exact;
//! * a string of at most 8 bytes packs big-endian and zero-padded — exact when it has no NUL bytes;
//! * a composite primary key of `k` integer columns packs each into `64 / k` bits, if every value is
//!   in `0 .. 2^(64/k)`.
//!
//! A primary-key value that does not fit is an error (`not supported: primary key ... does not fit in
//! 64 bits`). Secondary indexes use [`prefix`], which never fails: a longer string keeps its first 8
//! bytes, so equal prefixes share one index entry and the executor re-checks the predicate on each
//! row it fetches.

use crate::error::{SqlError, SqlResult};
use crate::value::Datum;

/// Sign-flipped integer.
pub fn int(v: i64) -> u64 {
    (v as u64) ^ (1 << 63)
}

/// Inverse of [`int`].
pub fn int_back(k: u64) -> i64 {
    (k ^ (1 << 63)) as i64
}

/// Order-preserving float bits.
pub fn float(v: f64) -> u64 {
    let b = v.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}

/// The first 8 bytes of `s`, big-endian, zero-padded.
fn text8(s: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = s.len().min(8);
    b[..n].copy_from_slice(&s[..n]);
    u64::from_be_bytes(b)
}

/// An order-preserving, possibly lossy key of one value (for secondary indexes and range bounds).
pub fn prefix(d: &Datum) -> u64 {
    match d {
        Datum::Int(v) | Datum::Date(v) | Datum::Timestamp(v) | Datum::TimestampTz(v) => int(*v),
        Datum::Bool(b) => int(*b as i64),
        Datum::Float(v) => float(*v),
        Datum::Text(s) => text8(s.as_bytes()),
        Datum::Null => u64::MAX,
    }
}

/// Whether [`prefix`] is exact (injective) for this value.
pub fn prefix_is_exact(d: &Datum) -> bool {
    match d {
        Datum::Text(s) => s.len() <= 8 && !s.as_bytes().contains(&0),
        _ => true,
    }
}

fn too_big(table: &str, values: &[Datum]) -> SqlError {
    let v: Vec<String> = values.iter().map(|d| d.to_string()).collect();
    SqlError::unsupported(format!(
        "primary key ({}) of table \"{table}\" does not fit in 64 bits",
        v.join(", ")
    ))
}

/// The exact key of a primary-key value (one value per key column, already coerced).
pub fn primary(table: &str, values: &[Datum]) -> SqlResult<u64> {
    if let [one] = values {
        if !prefix_is_exact(one) {
            return Err(too_big(table, values));
        }
        return Ok(prefix(one));
    }
    let bits = 64 / values.len() as u32;
    let mut key = 0u64;
    for v in values {
        let x = match v {
            Datum::Int(x) => *x,
            Datum::Bool(b) => *b as i64,
            _ => return Err(too_big(table, values)),
        };
        if x < 0 || (bits < 64 && (x as u64) >> bits != 0) {
            return Err(too_big(table, values));
        }
        key = (key << bits) | x as u64;
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_keep_order() {
        let ints = [i64::MIN, -5, -1, 0, 1, 7, i64::MAX];
        for w in ints.windows(2) {
            assert!(int(w[0]) < int(w[1]));
            assert_eq!(int_back(int(w[0])), w[0]);
        }
        let floats = [-1e9, -2.5, -0.0, 0.0, 1e-9, 3.0, 1e300];
        for w in floats.windows(2) {
            assert!(float(w[0]) <= float(w[1]), "{} {}", w[0], w[1]);
        }
        let texts = ["", "a", "ab", "b", "zzzzzzzz"];
        for w in texts.windows(2) {
            let (a, b) = (Datum::Text(w[0].into()), Datum::Text(w[1].into()));
            assert!(prefix(&a) < prefix(&b));
        }
    }

    #[test]
    fn composite_keys_pack_in_order_or_refuse() {
        let k = |a, b| primary("t", &[Datum::Int(a), Datum::Int(b)]);
        assert!(k(1, 9).unwrap() < k(2, 0).unwrap());
        assert!(k(1, 2).unwrap() < k(1, 3).unwrap());
        let e = k(-1, 0).unwrap_err();
        assert!(e.message.contains("does not fit in 64 bits"), "{e}");
        assert!(k(1 << 32, 0).is_err());
        assert!(primary("t", &[Datum::Text("longer than 8".into())]).is_err());
    }
}
