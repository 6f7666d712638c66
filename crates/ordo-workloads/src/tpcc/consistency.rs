//! The consistency conditions of clause 3.3.2, checked on the final state of a run.
//!
//! 1. For each warehouse: `W_YTD = sum(D_YTD)` over its districts.
//! 2. For each district: `D_NEXT_O_ID − 1 = max(O_ID) = max(NO_O_ID)` (the latter when NEW-ORDER has rows).
//! 3. For each district: `max(NO_O_ID) − min(NO_O_ID) + 1` = number of its NEW-ORDER rows.
//! 4. For each district: `sum(O_OL_CNT)` = number of its ORDER-LINE rows.
//!
//! NEW-ORDER's fence rows ([`FENCE_O_ID`]) are not orders and are skipped.
//! Besides, the secondary index ORDER_BY_CUSTOMER must hold exactly one entry per ORDER row.
//! The check reads the tables directly (no transaction): call it only when no worker is running.

use super::schema::*;
use ordo::harness::Violation;
use ordo::storage::{ColumnSet, Database, Table, ABSENT};
use std::collections::HashMap;
use std::sync::atomic::Ordering;

/// Integer column `col` of the present record `key`, read outside any transaction.
pub fn int<M: Default + Send + Sync>(t: &Table<M>, key: u64, col: usize) -> Option<i64> {
    let rid = t.lookup(key)?;
    if t.version(rid).load(Ordering::Acquire) & ABSENT != 0 {
        return None;
    }
    let mut buf = vec![0u64; t.schema().row_words()];
    t.read_into(rid, ColumnSet::one(col), &mut buf);
    Some(ordo::storage::RowRef::new(t.schema(), &buf).int(col))
}

/// Checks condition 1 alone: `W_YTD = sum(D_YTD)` for each warehouse (all that holds with
/// DBx1000's work, which inserts no orders: [`super::mix`]).
pub fn check_ytd<M: Default + Send + Sync>(
    db: &Database<M>,
    warehouses: u32,
) -> Result<(), Violation> {
    for w in 1..=warehouses {
        let w_ytd = int(db.table(WAREHOUSE), wh_key(w), col::W_YTD)
            .ok_or_else(|| format!("warehouse {w} is missing"))?;
        let mut d_ytd = 0;
        for d in 1..=DISTRICTS {
            d_ytd += int(db.table(DISTRICT), dist_key(w, d), col::D_YTD)
                .ok_or_else(|| format!("district ({w}, {d}) is missing"))?;
        }
        if w_ytd != d_ytd {
            return Err(format!(
                "consistency condition 1: warehouse {w} has w_ytd = {w_ytd} but its districts sum to {d_ytd}"
            ).into());
        }
    }
    Ok(())
}

/// Checks conditions 1–4; the error names the first violation.
pub fn check<M: Default + Send + Sync>(db: &Database<M>, warehouses: u32) -> Result<(), Violation> {
    check_ytd(db, warehouses)?;
    // Per district (key = district key): (max o_id, sum ol_cnt, orders), (min no, max no, count), lines.
    let mut orders: HashMap<u64, (u32, i64, u64)> = HashMap::new();
    let t = db.table(ORDER);
    for key in t.present_keys() {
        let e = orders.entry(order_district(key)).or_default();
        e.0 = e.0.max(order_id(key));
        e.1 += int(t, key, col::O_OL_CNT).unwrap_or(0);
        e.2 += 1;
    }
    let mut new_orders: HashMap<u64, (u32, u32, u64)> = HashMap::new();
    for key in db.table(NEW_ORDER).present_keys() {
        if order_id(key) == FENCE_O_ID {
            continue;
        }
        let e = new_orders
            .entry(order_district(key))
            .or_insert((u32::MAX, 0, 0));
        e.0 = e.0.min(order_id(key));
        e.1 = e.1.max(order_id(key));
        e.2 += 1;
    }
    let mut lines: HashMap<u64, i64> = HashMap::new();
    for key in db.table(ORDER_LINE).present_keys() {
        *lines.entry(order_district(key >> 4)).or_default() += 1;
    }
    let mut by_customer: HashMap<u64, u64> = HashMap::new();
    for key in db.table(ORDER_BY_CUSTOMER).present_keys() {
        // (w, d, c, o): the district is above c's 12 bits and o's 32.
        *by_customer.entry(key >> 44).or_default() += 1;
    }
    for w in 1..=warehouses {
        for d in 1..=DISTRICTS {
            let dk = dist_key(w, d);
            let t = db.table(DISTRICT);
            let next = int(t, dk, col::D_NEXT_O_ID).unwrap_or(0);
            let (max_o, ol_sum, n_orders) = orders.get(&dk).copied().unwrap_or_default();
            if next - 1 != max_o as i64 {
                return Err(format!(
                    "consistency condition 2: district ({w}, {d}) has d_next_o_id − 1 = {} but max(o_id) = {max_o}",
                    next - 1
                ).into());
            }
            if let Some(&(min_no, max_no, count)) = new_orders.get(&dk) {
                if max_no != max_o {
                    return Err(format!(
                        "consistency condition 2: district ({w}, {d}) has max(o_id) = {max_o} but max(no_o_id) = {max_no}"
                    ).into());
                }
                if (max_no - min_no) as u64 + 1 != count {
                    return Err(format!(
                        "consistency condition 3: district ({w}, {d}) has new orders {min_no}..={max_no} but {count} rows"
                    ).into());
                }
            }
            let n_lines = lines.get(&dk).copied().unwrap_or(0);
            if ol_sum != n_lines {
                return Err(format!(
                    "consistency condition 4: district ({w}, {d}) has sum(o_ol_cnt) = {ol_sum} but {n_lines} order lines"
                ).into());
            }
            let indexed = by_customer.get(&dk).copied().unwrap_or(0);
            if indexed != n_orders {
                return Err(format!(
                    "order_by_customer: district ({w}, {d}) has {n_orders} orders but {indexed} index entries"
                ).into());
            }
        }
    }
    Ok(())
}
