//! TPC-C partitioned by warehouse ([`ordo::txn::Program::partitioning`]), as H-Store partitions
//! it: every key's partition key is its warehouse (minus one), so that `hstore`, `hstore-lockmgr`
//! and the `vll-partitioned` family with P workers put warehouse w in partition (w − 1) mod P.
//! With workers bound to home warehouses (worker t to warehouse t mod W + 1, the default) and
//! W = P, worker t's transactions live in partition t but for the specification's remote
//! accesses: a New-Order's order line from another warehouse's stock (1% of lines) and a
//! Payment's customer of another warehouse (15%).
//!
//! Every packed key ([`super::schema`]) starts with its warehouse, so the partition key is a
//! shift of the key and nondecreasing along each table, as the contract requires; HISTORY's rows
//! inserted by Payment carry the paying warehouse in their key for the same reason (the loaded
//! ones are customer keys; nothing scans HISTORY). ITEM is read-only (replicated in every
//! partition, never locked), and gets partition key 0.

use super::schema::*;
use ordo::storage::TableId;
use ordo::txn::Partitioning;

/// What every TPC-C program's [`ordo::txn::Program::partitioning`] returns.
pub const BY_WAREHOUSE: Partitioning = partition_key;

/// The warehouse of key `key` of `table`, minus one (0 for ITEM).
pub fn partition_key(table: TableId, key: u64) -> u64 {
    // A district key (w, d) is w · d:4 ([`dist_key`]).
    let w = match table {
        WAREHOUSE => key,
        STOCK => stock_warehouse(key),
        HISTORY if key >> 63 == 1 => (key >> 47) & 0xFFFF,
        _ => {
            let district = match table {
                DISTRICT => key,
                // Loaded HISTORY rows are keyed by their customer.
                CUSTOMER | HISTORY => cust_district(key),
                NEW_ORDER | ORDER => order_district(key),
                ORDER_LINE => ol_district(key),
                CUSTOMER_BY_NAME => key >> 22,
                ORDER_BY_CUSTOMER => order_cust_district(key),
                _ => return 0,
            };
            district >> 4
        }
    };
    w.saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ordo::harness::Workload;

    #[test]
    fn every_key_of_a_warehouse_is_in_its_partition() {
        for w in [1, 2, 7, MAX_WAREHOUSES - 1] {
            let p = w as u64 - 1;
            assert_eq!(partition_key(WAREHOUSE, wh_key(w)), p);
            assert_eq!(partition_key(STOCK, stock_key(w, 99_999)), p);
            assert_eq!(partition_key(HISTORY, history_key(w, 3, 9)), p);
            for d in [1, DISTRICTS] {
                assert_eq!(partition_key(DISTRICT, dist_key(w, d)), p);
                assert_eq!(partition_key(CUSTOMER, cust_key(w, d, 3000)), p);
                assert_eq!(partition_key(HISTORY, cust_key(w, d, 3000)), p, "loaded");
                assert_eq!(partition_key(NEW_ORDER, order_key(w, d, FENCE_O_ID)), p);
                assert_eq!(partition_key(ORDER, order_key(w, d, 1)), p);
                assert_eq!(partition_key(ORDER_LINE, ol_key(w, d, u32::MAX, 15)), p);
                let by_name = cust_name_key(w, d, 999, 3000);
                assert_eq!(partition_key(CUSTOMER_BY_NAME, by_name), p);
                let by_cust = order_cust_key(w, d, 3000, u32::MAX);
                assert_eq!(partition_key(ORDER_BY_CUSTOMER, by_cust), p);
            }
        }
        assert_eq!(partition_key(ITEM, item_key(77)), 0);
    }

    /// Along every table of a loaded database the partition key never decreases (so a scan's
    /// partitions lie between its ends'), and each warehouse's keys have their warehouse's.
    #[test]
    fn partition_keys_never_decrease_along_a_loaded_table() {
        let w = super::super::Tpcc::new(super::super::TpccConfig {
            warehouses: 3,
            tiny: true,
            ..Default::default()
        })
        .unwrap();
        let mut db = ordo::storage::Database::<()>::new();
        w.load(&mut db).unwrap();
        for table in WAREHOUSE..=ORDER_BY_CUSTOMER {
            let mut keys = db.table(table).present_keys();
            keys.sort_unstable();
            let parts: Vec<u64> = keys.iter().map(|&k| partition_key(table, k)).collect();
            assert!(parts.windows(2).all(|p| p[0] <= p[1]), "table {table}");
            if table != ITEM {
                assert_eq!(parts.first(), Some(&0), "table {table}");
                assert_eq!(parts.last(), Some(&2), "table {table}");
            }
        }
    }
}
