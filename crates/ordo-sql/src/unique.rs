//! UNIQUE constraints: each one a storage table `unique:<name>` keyed by a hash of the encoded values
//! of its columns, written in the statement's transaction beside the row (see [`crate::catalog`]).
//!
//! Inserting a row reads its entry's key and inserts the entry; both are protocol operations on one
//! key, so two transactions inserting the same value conflict there under every protocol that keeps
//! inserts of one key apart (as primary keys already rely on), and the later one gets `23505`
//! (or a serialization failure). A row with a NULL in a constrained column has no entry: NULLs never
//! conflict, PostgreSQL's default (`NULLS DISTINCT`). An entry holds the encoded values, so the
//! rare different values with one hash are told apart (and refused, `0A000`, rather than reported as
//! duplicates).

use crate::catalog::{TableDef, UniqueDef};
use crate::error::{SqlError, SqlResult};
use crate::value::{Datum, SqlType};
use ordo::storage::ColumnSet;
use ordo::txn::Tx;

/// Most bytes of one entry.
pub const ENTRY_MAX: usize = 4096;

/// The bytes an entry of columns of `types` may take (its storage column's length).
pub fn entry_len(types: &[SqlType]) -> usize {
    types
        .iter()
        .map(|t| match t {
            SqlType::Text(n) => *n as usize + 2,
            _ => 8,
        })
        .sum()
}

/// The encoded values of `u`'s columns in `row`; `None` if one is NULL (no entry).
pub fn encode(def: &TableDef, u: &UniqueDef, row: &[Datum]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    for &c in &u.columns {
        match &row[c] {
            Datum::Null => return None,
            Datum::Int(v) | Datum::Date(v) | Datum::Timestamp(v) | Datum::TimestampTz(v) => {
                out.extend_from_slice(&v.to_le_bytes())
            }
            Datum::Bool(b) => out.extend_from_slice(&(*b as i64).to_le_bytes()),
            // -0 equals 0.
            Datum::Float(v) => out.extend_from_slice(&(v + 0.0).to_bits().to_le_bytes()),
            Datum::Text(s) => {
                out.extend_from_slice(&(s.len() as u16).to_le_bytes());
                out.extend_from_slice(s.as_bytes());
            }
        }
    }
    debug_assert!(out.len() <= entry_len(&columns_types(def, u)));
    Some(out)
}

fn columns_types(def: &TableDef, u: &UniqueDef) -> Vec<SqlType> {
    u.columns.iter().map(|&c| def.columns[c].ty).collect()
}

/// The storage key of an entry: FNV-1a, then a 64-bit finalizer.
pub fn key(entry: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in entry {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h
}

/// PostgreSQL's report of a duplicate: `duplicate key value violates unique constraint "t_a_key":
/// Key (a)=(1) already exists.`
pub fn violation(def: &TableDef, name: &str, columns: &[usize], row: &[Datum]) -> SqlError {
    let cols: Vec<&str> = columns
        .iter()
        .map(|&c| def.columns[c].name.as_str())
        .collect();
    let vals: Vec<String> = columns.iter().map(|&c| row[c].to_string()).collect();
    SqlError::new(
        "23505",
        format!(
            "duplicate key value violates unique constraint \"{name}\": Key ({})=({}) already exists.",
            cols.join(", "),
            vals.join(", ")
        ),
    )
}

fn collision(u: &UniqueDef) -> SqlError {
    SqlError::unsupported(format!(
        "two different values with one hash in unique constraint \"{}\"",
        u.name
    ))
}

/// Adds `row`'s entry to `u`, or fails with `23505` if another row holds its values.
pub fn add<T: Tx>(tx: &mut T, def: &TableDef, u: &UniqueDef, row: &[Datum]) -> SqlResult<()> {
    let Some(entry) = encode(def, u, row) else {
        return Ok(());
    };
    let k = key(&entry);
    let held = tx
        .get(u.storage, k, ColumnSet::ALL)?
        .map(|r| r.str(0) == entry.as_slice());
    match held {
        Some(true) => Err(violation(def, &u.name, &u.columns, row)),
        Some(false) => Err(collision(u)),
        None => match tx.insert(u.storage, k, |r| {
            let _ = r.set_str(0, &entry);
        }) {
            Ok(()) => Ok(()),
            Err(a) => {
                let e = SqlError::from(a);
                if e.code == "23505" {
                    Err(violation(def, &u.name, &u.columns, row))
                } else {
                    Err(e)
                }
            }
        },
    }
}

/// Removes `row`'s entry from `u` (the row is deleted, or its constrained values change).
pub fn remove<T: Tx>(tx: &mut T, def: &TableDef, u: &UniqueDef, row: &[Datum]) -> SqlResult<()> {
    if let Some(entry) = encode(def, u, row) {
        tx.delete(u.storage, key(&entry))?;
    }
    Ok(())
}
