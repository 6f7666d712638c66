//! Secondary-index maintenance: posting lists of row keys, kept in the index's own storage table and
//! changed inside the statement's transaction (see [`crate::catalog`]).

use crate::catalog::{IndexDef, POSTING_MAX};
use crate::error::{SqlError, SqlResult};
use crate::key;
use crate::value::Datum;
use ordo::storage::ColumnSet;
use ordo::txn::Tx;

/// The row keys of a posting list.
pub fn postings(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
}

/// Adds row `row_key` under `value`.
pub fn add<T: Tx>(tx: &mut T, idx: &IndexDef, value: &Datum, row_key: u64) -> SqlResult<()> {
    let k = key::prefix(value);
    let full = || {
        SqlError::unsupported(format!(
            "more than {POSTING_MAX} rows with one value in index \"{}\"",
            idx.name
        ))
    };
    let added = tx.update(idx.storage, k, ColumnSet::ALL, |row| {
        let mut list = row.str(0).to_vec();
        if list.len() / 8 >= POSTING_MAX {
            return false;
        }
        list.extend_from_slice(&row_key.to_le_bytes());
        row.set_str(0, &list).is_ok()
    })?;
    match added {
        Some(true) => Ok(()),
        Some(false) => Err(full()),
        None => {
            tx.insert(idx.storage, k, |row| {
                let _ = row.set_str(0, &row_key.to_le_bytes());
            })?;
            Ok(())
        }
    }
}

/// Removes row `row_key` from under `value` (and the entry, once empty).
pub fn remove<T: Tx>(tx: &mut T, idx: &IndexDef, value: &Datum, row_key: u64) -> SqlResult<()> {
    let k = key::prefix(value);
    let left = tx.update(idx.storage, k, ColumnSet::ALL, |row| {
        let list: Vec<u8> = postings(row.str(0))
            .filter(|&r| r != row_key)
            .flat_map(u64::to_le_bytes)
            .collect();
        let _ = row.set_str(0, &list);
        list.len()
    })?;
    if left == Some(0) {
        tx.delete(idx.storage, k)?;
    }
    Ok(())
}
