//! The nine TPC-C tables (clause 1.3), two secondary-index tables, and the `u64` key layouts.
//!
//! Every column of the specification is kept, in its order. Money is an integer number of cents and
//! rates (tax, discount) an integer number of basis points (1/10,000), so sums are exact and the
//! consistency conditions compare integers. A null date or carrier is 0.
//!
//! ## Keys
//! Composite keys are packed into one `u64`, most significant component first, so that numeric order is
//! the order of the tuple and a range `lo..=hi` over a prefix is a range scan:
//!
//! | table               | key                                   | bits (high → low)          |
//! |---------------------|---------------------------------------|----------------------------|
//! | WAREHOUSE           | w                                     | w                          |
//! | DISTRICT            | (w, d)                                | w · d:4                    |
//! | CUSTOMER            | (w, d, c)                             | w · d:4 · c:12             |
//! | HISTORY             | loaded: the customer key; later: 1·w:16·gen:15·seq:32 (no primary key in the spec) |
//! | NEW-ORDER, ORDER    | (w, d, o)                             | w · d:4 · o:32             |
//! | ORDER-LINE          | (w, d, o, ol)                         | w · d:4 · o:32 · ol:4      |
//! | ITEM                | i                                     | i                          |
//! | STOCK               | (w, i)                                | w · i:17                   |
//! | CUSTOMER_BY_NAME    | (w, d, last-name number, c)           | w · d:4 · name:10 · c:12   |
//! | ORDER_BY_CUSTOMER   | (w, d, c, o)                          | w · d:4 · c:12 · o:32      |
//!
//! The widest layout (ORDER_BY_CUSTOMER) leaves 16 bits for w, so at most [`MAX_WAREHOUSES`]. A last
//! name is one of 1,000 syllable combinations (clause 4.3.2.3), so its number 0..999 orders the index
//! exactly like the name would group it; within one name the transaction sorts the few matches by first
//! name itself (the index row carries `c_first`).

use ordo::storage::{Column, ColumnType, Schema, TableId, TableSpec};

pub const WAREHOUSE: TableId = 0;
pub const DISTRICT: TableId = 1;
pub const CUSTOMER: TableId = 2;
pub const HISTORY: TableId = 3;
pub const NEW_ORDER: TableId = 4;
pub const ORDER: TableId = 5;
pub const ORDER_LINE: TableId = 6;
pub const ITEM: TableId = 7;
pub const STOCK: TableId = 8;
/// Secondary index: customers by last name (key [`cust_name_key`]).
pub const CUSTOMER_BY_NAME: TableId = 9;
/// Secondary index: orders by customer (key [`order_cust_key`]), for Order-Status and Credit Check.
pub const ORDER_BY_CUSTOMER: TableId = 10;

/// The o_id of each district's NEW-ORDER **fence** row: a row no transaction reads or writes, loaded
/// after the district's real new orders. It keeps next-key locking inside the district: an insert at
/// the end of district d locks its successor, which is the fence rather than district d+1's oldest new
/// order — and rather than the run of tombstones delivered orders leave there, which 2PL's insert
/// locks through up to the first present key (`ordo::protocols::twopl`). Delivery's scan stops before
/// it and the consistency check skips it.
pub const FENCE_O_ID: u32 = u32::MAX;

/// Most warehouses the key layouts hold.
pub const MAX_WAREHOUSES: u32 = 1 << 16;
/// Districts per warehouse.
pub const DISTRICTS: u32 = 10;

/// Column positions, per table.
pub mod col {
    // WAREHOUSE
    pub const W_ID: usize = 0;
    pub const W_NAME: usize = 1;
    pub const W_STREET_1: usize = 2;
    pub const W_TAX: usize = 7;
    pub const W_YTD: usize = 8;
    // DISTRICT
    pub const D_ID: usize = 0;
    pub const D_W_ID: usize = 1;
    pub const D_NAME: usize = 2;
    pub const D_STREET_1: usize = 3;
    pub const D_TAX: usize = 8;
    pub const D_YTD: usize = 9;
    pub const D_NEXT_O_ID: usize = 10;
    // CUSTOMER
    pub const C_ID: usize = 0;
    pub const C_D_ID: usize = 1;
    pub const C_W_ID: usize = 2;
    pub const C_FIRST: usize = 3;
    pub const C_MIDDLE: usize = 4;
    pub const C_LAST: usize = 5;
    pub const C_STREET_1: usize = 6;
    pub const C_PHONE: usize = 11;
    pub const C_SINCE: usize = 12;
    pub const C_CREDIT: usize = 13;
    pub const C_CREDIT_LIM: usize = 14;
    pub const C_DISCOUNT: usize = 15;
    pub const C_BALANCE: usize = 16;
    pub const C_YTD_PAYMENT: usize = 17;
    pub const C_PAYMENT_CNT: usize = 18;
    pub const C_DELIVERY_CNT: usize = 19;
    pub const C_DATA: usize = 20;
    // HISTORY
    pub const H_C_ID: usize = 0;
    pub const H_C_D_ID: usize = 1;
    pub const H_C_W_ID: usize = 2;
    pub const H_D_ID: usize = 3;
    pub const H_W_ID: usize = 4;
    pub const H_DATE: usize = 5;
    pub const H_AMOUNT: usize = 6;
    pub const H_DATA: usize = 7;
    // NEW-ORDER
    pub const NO_O_ID: usize = 0;
    pub const NO_D_ID: usize = 1;
    pub const NO_W_ID: usize = 2;
    // ORDER
    pub const O_ID: usize = 0;
    pub const O_D_ID: usize = 1;
    pub const O_W_ID: usize = 2;
    pub const O_C_ID: usize = 3;
    pub const O_ENTRY_D: usize = 4;
    pub const O_CARRIER_ID: usize = 5;
    pub const O_OL_CNT: usize = 6;
    pub const O_ALL_LOCAL: usize = 7;
    // ORDER-LINE
    pub const OL_O_ID: usize = 0;
    pub const OL_D_ID: usize = 1;
    pub const OL_W_ID: usize = 2;
    pub const OL_NUMBER: usize = 3;
    pub const OL_I_ID: usize = 4;
    pub const OL_SUPPLY_W_ID: usize = 5;
    pub const OL_DELIVERY_D: usize = 6;
    pub const OL_QUANTITY: usize = 7;
    pub const OL_AMOUNT: usize = 8;
    pub const OL_DIST_INFO: usize = 9;
    // ITEM
    pub const I_ID: usize = 0;
    pub const I_IM_ID: usize = 1;
    pub const I_NAME: usize = 2;
    pub const I_PRICE: usize = 3;
    pub const I_DATA: usize = 4;
    // STOCK
    pub const S_I_ID: usize = 0;
    pub const S_W_ID: usize = 1;
    pub const S_QUANTITY: usize = 2;
    /// `S_DIST_01` .. `S_DIST_10` are `S_DIST_01 + d - 1`.
    pub const S_DIST_01: usize = 3;
    pub const S_YTD: usize = 13;
    pub const S_ORDER_CNT: usize = 14;
    pub const S_REMOTE_CNT: usize = 15;
    pub const S_DATA: usize = 16;
    // CUSTOMER_BY_NAME
    pub const CN_FIRST: usize = 0;
    pub const CN_C_ID: usize = 1;
    // ORDER_BY_CUSTOMER
    pub const OC_O_ID: usize = 0;
}

fn schema(cols: &[(&str, ColumnType)]) -> Schema {
    Schema::new(cols.iter().map(|(n, t)| Column::new(*n, *t)).collect())
        .expect("valid TPC-C schema")
}

use ColumnType::{Char, Int, VarChar};

fn address(prefix: &str) -> Vec<(String, ColumnType)> {
    vec![
        (format!("{prefix}_street_1"), VarChar(20)),
        (format!("{prefix}_street_2"), VarChar(20)),
        (format!("{prefix}_city"), VarChar(20)),
        (format!("{prefix}_state"), Char(2)),
        (format!("{prefix}_zip"), Char(9)),
    ]
}

fn with_address(head: &[(&str, ColumnType)], prefix: &str, tail: &[(&str, ColumnType)]) -> Schema {
    let mut cols: Vec<Column> = head.iter().map(|(n, t)| Column::new(*n, *t)).collect();
    cols.extend(address(prefix).into_iter().map(|(n, t)| Column::new(n, t)));
    cols.extend(tail.iter().map(|(n, t)| Column::new(*n, *t)));
    Schema::new(cols).expect("valid TPC-C schema")
}

/// The table specifications, in [`TableId`] order, sized for `warehouses` and `customers` per district
/// and `items` items.
pub fn tables(warehouses: u32, customers: u32, items: u32) -> Vec<TableSpec> {
    let w = warehouses as usize;
    let dists = w * DISTRICTS as usize;
    let custs = dists * customers as usize;
    let stock = w * items as usize;
    let stock_dists: Vec<(String, ColumnType)> = (1..=10)
        .map(|d| (format!("s_dist_{d:02}"), Char(24)))
        .collect();
    let mut stock_cols: Vec<Column> = vec![
        Column::new("s_i_id", Int),
        Column::new("s_w_id", Int),
        Column::new("s_quantity", Int),
    ];
    stock_cols.extend(stock_dists.into_iter().map(|(n, t)| Column::new(n, t)));
    stock_cols.extend([
        Column::new("s_ytd", Int),
        Column::new("s_order_cnt", Int),
        Column::new("s_remote_cnt", Int),
        Column::new("s_data", VarChar(50)),
    ]);
    vec![
        TableSpec::new(
            "warehouse",
            with_address(
                &[("w_id", Int), ("w_name", VarChar(10))],
                "w",
                &[("w_tax", Int), ("w_ytd", Int)],
            ),
        )
        .capacity(w),
        TableSpec::new(
            "district",
            with_address(
                &[("d_id", Int), ("d_w_id", Int), ("d_name", VarChar(10))],
                "d",
                &[("d_tax", Int), ("d_ytd", Int), ("d_next_o_id", Int)],
            ),
        )
        .capacity(dists),
        TableSpec::new(
            "customer",
            with_address(
                &[
                    ("c_id", Int),
                    ("c_d_id", Int),
                    ("c_w_id", Int),
                    ("c_first", VarChar(16)),
                    ("c_middle", Char(2)),
                    ("c_last", VarChar(16)),
                ],
                "c",
                &[
                    ("c_phone", Char(16)),
                    ("c_since", Int),
                    ("c_credit", Char(2)),
                    ("c_credit_lim", Int),
                    ("c_discount", Int),
                    ("c_balance", Int),
                    ("c_ytd_payment", Int),
                    ("c_payment_cnt", Int),
                    ("c_delivery_cnt", Int),
                    ("c_data", VarChar(500)),
                ],
            ),
        )
        .capacity(custs),
        TableSpec::new(
            "history",
            schema(&[
                ("h_c_id", Int),
                ("h_c_d_id", Int),
                ("h_c_w_id", Int),
                ("h_d_id", Int),
                ("h_w_id", Int),
                ("h_date", Int),
                ("h_amount", Int),
                ("h_data", VarChar(24)),
            ]),
        )
        .capacity(custs * 2),
        TableSpec::new(
            "new_order",
            schema(&[("no_o_id", Int), ("no_d_id", Int), ("no_w_id", Int)]),
        )
        // One structure stripe per district: Delivery's scan covers one.
        .ordered(32)
        .capacity(custs),
        TableSpec::new(
            "order",
            schema(&[
                ("o_id", Int),
                ("o_d_id", Int),
                ("o_w_id", Int),
                ("o_c_id", Int),
                ("o_entry_d", Int),
                ("o_carrier_id", Int),
                ("o_ol_cnt", Int),
                ("o_all_local", Int),
            ]),
        )
        .capacity(custs * 2),
        TableSpec::new(
            "order_line",
            schema(&[
                ("ol_o_id", Int),
                ("ol_d_id", Int),
                ("ol_w_id", Int),
                ("ol_number", Int),
                ("ol_i_id", Int),
                ("ol_supply_w_id", Int),
                ("ol_delivery_d", Int),
                ("ol_quantity", Int),
                ("ol_amount", Int),
                ("ol_dist_info", Char(24)),
            ]),
        )
        // 16 orders per stripe: Stock-Level's 20 orders span two or three stripes.
        .ordered(8)
        .capacity(custs * 20),
        TableSpec::new(
            "item",
            schema(&[
                ("i_id", Int),
                ("i_im_id", Int),
                ("i_name", VarChar(24)),
                ("i_price", Int),
                ("i_data", VarChar(50)),
            ]),
        )
        .capacity(items as usize)
        // Never written after the load: no transaction locks it under the planning protocols.
        .read_only(),
        TableSpec::new(
            "stock",
            Schema::new(stock_cols).expect("valid TPC-C schema"),
        )
        .capacity(stock),
        TableSpec::new(
            "customer_by_name",
            schema(&[("c_first", VarChar(16)), ("c_id", Int)]),
        )
        // One stripe per (w, d, last name).
        .ordered(12)
        .capacity(custs)
        // Customers are never added, removed or renamed: read-only once loaded.
        .read_only(),
        TableSpec::new("order_by_customer", schema(&[("o_id", Int)]))
            // One stripe per customer.
            .ordered(32)
            .capacity(custs * 2),
    ]
}

/// Key of WAREHOUSE `w`.
#[inline]
pub fn wh_key(w: u32) -> u64 {
    w as u64
}
/// Key of DISTRICT `(w, d)`.
#[inline]
pub fn dist_key(w: u32, d: u32) -> u64 {
    ((w as u64) << 4) | d as u64
}
/// Key of CUSTOMER `(w, d, c)`.
#[inline]
pub fn cust_key(w: u32, d: u32, c: u32) -> u64 {
    (dist_key(w, d) << 12) | c as u64
}
/// Key of ORDER and NEW-ORDER `(w, d, o)`.
#[inline]
pub fn order_key(w: u32, d: u32, o: u32) -> u64 {
    (dist_key(w, d) << 32) | o as u64
}
/// Key of ORDER-LINE `(w, d, o, ol)`.
#[inline]
pub fn ol_key(w: u32, d: u32, o: u32, ol: u32) -> u64 {
    (order_key(w, d, o) << 4) | ol as u64
}
/// Key of ITEM `i`.
#[inline]
pub fn item_key(i: u32) -> u64 {
    i as u64
}
/// Key of STOCK `(w, i)`.
#[inline]
pub fn stock_key(w: u32, i: u32) -> u64 {
    ((w as u64) << 17) | i as u64
}
/// Key of CUSTOMER_BY_NAME `(w, d, name, c)`.
#[inline]
pub fn cust_name_key(w: u32, d: u32, name: u32, c: u32) -> u64 {
    (((dist_key(w, d) << 10) | name as u64) << 12) | c as u64
}
/// Key of ORDER_BY_CUSTOMER `(w, d, c, o)`.
#[inline]
pub fn order_cust_key(w: u32, d: u32, c: u32, o: u32) -> u64 {
    (cust_key(w, d, c) << 32) | o as u64
}
/// Key of a HISTORY row inserted by a Payment of warehouse `w`: `seq` of generator `gen` (loaded
/// rows use customer keys, whose top bit is 0). The warehouse puts the row in its warehouse's
/// partition ([`super::partitions`]); the generator (one per worker, numbered modulo 2^15) and its
/// sequence number make the key unique.
#[inline]
pub fn history_key(w: u32, gen: u64, seq: u64) -> u64 {
    (1 << 63)
        | ((w as u64 & 0xFFFF) << 47)
        | ((gen & ((1 << 15) - 1)) << 32)
        | (seq & ((1 << 32) - 1))
}

/// The district `(w, d)` (its [`dist_key`]) of an ORDER / NEW-ORDER key.
#[inline]
pub fn order_district(key: u64) -> u64 {
    key >> 32
}
/// The district `(w, d)` (its [`dist_key`]) of a CUSTOMER key.
#[inline]
pub fn cust_district(key: u64) -> u64 {
    key >> 12
}
/// The district `(w, d)` (its [`dist_key`]) of an ORDER-LINE key.
#[inline]
pub fn ol_district(key: u64) -> u64 {
    key >> 36
}
/// The district `(w, d)` (its [`dist_key`]) of an ORDER_BY_CUSTOMER key.
#[inline]
pub fn order_cust_district(key: u64) -> u64 {
    key >> 44
}
/// The warehouse (its [`wh_key`]) of a STOCK key.
#[inline]
pub fn stock_warehouse(key: u64) -> u64 {
    key >> 17
}
/// The o_id of an ORDER / NEW-ORDER key.
#[inline]
pub fn order_id(key: u64) -> u32 {
    key as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_tuple_order() {
        let w = MAX_WAREHOUSES - 1;
        assert!(order_cust_key(w, 10, 4095, u32::MAX) > order_cust_key(w, 10, 4095, 0));
        assert!(order_cust_key(w, 10, 1, 0) > order_cust_key(w, 9, 3000, u32::MAX));
        assert!(ol_key(2, 1, 1, 1) > ol_key(1, 10, u32::MAX, 15));
        assert!(ol_key(1, 3, 7, 15) < ol_key(1, 3, 8, 0));
        assert!(cust_name_key(1, 1, 5, 1) > cust_name_key(1, 1, 4, 3000));
        assert!(history_key(1, 0, 0) > cust_key(w, 10, 4095));
        assert_eq!(order_district(order_key(3, 7, 99)), dist_key(3, 7));
        assert_eq!(order_id(order_key(3, 7, 99)), 99);
        assert_eq!(cust_district(cust_key(w, 10, 4095)), dist_key(w, 10));
        assert_eq!(ol_district(ol_key(w, 10, u32::MAX, 15)), dist_key(w, 10));
        assert_eq!(
            order_cust_district(order_cust_key(w, 10, 4095, u32::MAX)),
            dist_key(w, 10)
        );
        assert_eq!(stock_warehouse(stock_key(w, (1 << 17) - 1)), wh_key(w));
        for (i, spec) in tables(1, 30, 100).iter().enumerate() {
            let named = [
                "warehouse",
                "district",
                "customer",
                "history",
                "new_order",
                "order",
                "order_line",
                "item",
                "stock",
                "customer_by_name",
                "order_by_customer",
            ];
            assert_eq!(spec.name, named[i]);
        }
        let t = tables(1, 30, 100);
        assert_eq!(
            t[CUSTOMER as usize].schema.columns()[col::C_DATA].name,
            "c_data"
        );
        assert_eq!(
            t[CUSTOMER as usize].schema.columns()[col::C_PHONE].name,
            "c_phone"
        );
        assert_eq!(
            t[DISTRICT as usize].schema.columns()[col::D_TAX].name,
            "d_tax"
        );
        assert_eq!(
            t[WAREHOUSE as usize].schema.columns()[col::W_TAX].name,
            "w_tax"
        );
        assert_eq!(
            t[STOCK as usize].schema.columns()[col::S_DATA].name,
            "s_data"
        );
        assert_eq!(t[STOCK as usize].schema.columns()[col::S_YTD].name, "s_ytd");
    }
}
