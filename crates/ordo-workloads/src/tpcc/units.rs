//! TPC-C's conflict units ([`ordo::txn::Program::conflict_units`]): the ranges of keys PWV orders
//! transactions over instead of key by key (the PWV paper's §5.3).
//!
//! | table                                   | fine (`pwv`)            | coarse (`pwv-coarse`)   |
//! |-----------------------------------------|-------------------------|-------------------------|
//! | DISTRICT, CUSTOMER, NEW-ORDER, ORDER, ORDER-LINE, ORDER_BY_CUSTOMER | (w, d) | (w, d)      |
//! | STOCK                                   | per key                 | w                       |
//! | WAREHOUSE                               | per key                 | per key                 |
//! | HISTORY                                 | per key                 | per key                 |
//! | ITEM, CUSTOMER_BY_NAME (read-only)      | per key (never ordered) | per key                 |
//!
//! The paper names its district-keyed tables by their (warehouse, district) foreign-key pair at
//! both grains, and Stock by warehouse at the coarse one. Here each unit is the prefix of the
//! table's packed key ([`super::schema`]: the warehouse and district come first), so it is a
//! contiguous range of keys and every key of a table gets one, as the units' contract requires.
//! HISTORY is not keyed by district here (a Payment's row is keyed by its warehouse, its
//! generator and a sequence number, unique, so no two transactions meet there): its keys stay their own units.
//! Read-only tables need no unit: nothing orders their reads.
//!
//! What a unit buys: a declaration in a unit does not go stale when the key inside it came from
//! a reconnaissance (a customer found by last name, an o_id from `d_next_o_id`), so PWV need not
//! treat the piece as abortable and keeps its early write visibility; and the coarse Stock unit
//! is one entry of PWV's graph per warehouse and New-Order instead of 5 to 15.

use super::schema::*;
use ordo::storage::TableId;
use ordo::txn::ConflictUnits;

/// What every TPC-C program's [`ordo::txn::Program::conflict_units`] returns.
pub const UNITS: ConflictUnits = conflict_unit;

/// The unit of key `key` of `table` (see the module doc); `None`: the key is its own unit.
pub fn conflict_unit(table: TableId, key: u64, coarse: bool) -> Option<u64> {
    match table {
        DISTRICT => Some(key),
        CUSTOMER => Some(cust_district(key)),
        NEW_ORDER | ORDER => Some(order_district(key)),
        ORDER_LINE => Some(ol_district(key)),
        ORDER_BY_CUSTOMER => Some(order_cust_district(key)),
        STOCK if coarse => Some(stock_warehouse(key)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys at the edges of every layout: each district's (and warehouse's) first, second and last
    /// possible key in every table, for warehouses at both ends of the layout. Every table is
    /// tested on all of them: a unit function must hold for any `u64`, not only its own layout's.
    fn edge_keys() -> Vec<u64> {
        let mut keys = Vec::new();
        let mut range = |lo: u64, hi: u64| keys.extend([lo, lo + 1, hi]);
        for w in [1, 2, MAX_WAREHOUSES - 1] {
            range(wh_key(w), wh_key(w));
            range(stock_key(w, 0), stock_key(w, (1 << 17) - 1));
            for d in [1, 2, DISTRICTS] {
                range(dist_key(w, d), dist_key(w, d));
                range(cust_key(w, d, 0), cust_key(w, d, 4095));
                range(order_key(w, d, 0), order_key(w, d, FENCE_O_ID));
                range(ol_key(w, d, 0, 0), ol_key(w, d, u32::MAX, 15));
                range(
                    order_cust_key(w, d, 0, 0),
                    order_cust_key(w, d, 4095, u32::MAX),
                );
                range(cust_name_key(w, d, 0, 0), cust_name_key(w, d, 1023, 4095));
            }
        }
        range(history_key(1, 0, 0), history_key(MAX_WAREHOUSES - 1, 5, 7));
        range(item_key(1), item_key(100_000));
        keys
    }

    /// The keys table `table` of a loaded database holds, and every layout's edges, in order.
    fn keys_of(table: TableId, loaded: &ordo::storage::Database<()>) -> Vec<u64> {
        let mut keys = edge_keys();
        keys.extend(loaded.table(table).present_keys());
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    #[test]
    fn every_table_has_units_for_all_its_keys_or_none_and_each_is_a_key_range() {
        use ordo::harness::Workload;
        let w = super::super::Tpcc::new(super::super::TpccConfig {
            warehouses: 2,
            tiny: true,
            ..Default::default()
        })
        .unwrap();
        let mut db = ordo::storage::Database::new();
        w.load(&mut db).unwrap();
        for coarse in [false, true] {
            for table in WAREHOUSE..=ORDER_BY_CUSTOMER {
                let keys = keys_of(table, &db);
                let units: Vec<Option<u64>> = keys
                    .iter()
                    .map(|&k| conflict_unit(table, k, coarse))
                    .collect();
                let named = units.iter().filter(|u| u.is_some()).count();
                assert!(
                    named == 0 || named == keys.len(),
                    "table {table} coarse={coarse}: some keys have a unit, some not"
                );
                // A unit function that never decreases along the keys makes each unit one range.
                for pair in units.windows(2) {
                    assert!(
                        pair[0] <= pair[1],
                        "table {table} coarse={coarse}: {pair:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn district_keyed_tables_are_ordered_by_warehouse_and_district_at_both_grains() {
        for coarse in [false, true] {
            for (w, d) in [(1, 1), (3, 10), (MAX_WAREHOUSES - 1, 7)] {
                let unit = Some(dist_key(w, d));
                assert_eq!(conflict_unit(DISTRICT, dist_key(w, d), coarse), unit);
                assert_eq!(conflict_unit(CUSTOMER, cust_key(w, d, 77), coarse), unit);
                for t in [NEW_ORDER, ORDER] {
                    assert_eq!(conflict_unit(t, order_key(w, d, 3001), coarse), unit);
                }
                assert_eq!(conflict_unit(ORDER_LINE, ol_key(w, d, 9, 4), coarse), unit);
                assert_eq!(
                    conflict_unit(ORDER_BY_CUSTOMER, order_cust_key(w, d, 5, 9), coarse),
                    unit
                );
                // Per key.
                for (t, k) in [
                    (WAREHOUSE, wh_key(w)),
                    (HISTORY, history_key(w, 1, 2)),
                    (ITEM, item_key(5)),
                    (CUSTOMER_BY_NAME, cust_name_key(w, d, 3, 4)),
                ] {
                    assert_eq!(conflict_unit(t, k, coarse), None, "table {t}");
                }
            }
            // Stock: by warehouse only at the coarse grain.
            let (a, b) = (stock_key(4, 17), stock_key(4, 99_999));
            let expected = coarse.then_some(wh_key(4));
            assert_eq!(conflict_unit(STOCK, a, coarse), expected);
            assert_eq!(conflict_unit(STOCK, b, coarse), expected);
            assert_ne!(
                conflict_unit(STOCK, stock_key(5, 17), true),
                conflict_unit(STOCK, a, true)
            );
        }
    }
}
