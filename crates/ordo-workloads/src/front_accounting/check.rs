//! `front-accounting`'s invariants on a run's final state (the module doc's list).

use super::txn::{doc_key, move_key};
use super::*;
use crate::inspect::with_row;
use std::collections::{BTreeSet, HashMap};

/// Every present key of `table` (an ordered table) with its first three columns.
fn rows<M: Default + Send + Sync>(
    db: &Database<M>,
    table: TableId,
    width: usize,
    buf: &mut Vec<u64>,
) -> HashMap<u64, Vec<i64>> {
    let keys: Vec<u64> = db.table(table).range(0, u64::MAX).map(|(k, _)| k).collect();
    keys.into_iter()
        .filter_map(|k| {
            with_row(db, table, k, buf, |r| {
                (0..width).map(|c| r.int(c)).collect()
            })
            .map(|r| (k, r))
        })
        .collect()
}

fn fail<T>(what: String) -> Result<T, Violation> {
    Err(what.into())
}

pub(super) fn check<M: Default + Send + Sync>(
    w: &FrontAccounting,
    db: &Database<M>,
) -> Result<(), Violation> {
    let goods = w.cfg.goods;
    let mut buf = Vec::new();
    let orders = rows(db, ORDERS, 6, &mut buf);
    let debtor = rows(db, DEBTOR_TRANS, 3, &mut buf);
    let moves = rows(db, MOVES, 3, &mut buf);
    let supp = rows(db, SUPP_TRANS, 3, &mut buf);
    // Numbers given per document type.
    let mut numbers: Vec<Vec<i64>> = vec![Vec::new(); DOC_TYPES as usize];

    // Stock moves: per item their sum; adjustments counted.
    let mut moved = vec![0i64; goods as usize];
    for (&k, m) in &moves {
        let item = m[M_ITEM];
        if !(0..goods as i64).contains(&item) || k & 0xff != item as u64 {
            return fail(format!("stock move {k} names item {item}"));
        }
        moved[item as usize] += m[M_QTY];
        if m[M_TYPE] == M_ADJUSTMENT {
            numbers[T_ADJUSTMENT as usize].push(0);
        }
    }

    // Orders: each one's documents match its status.
    let mut on_order = vec![0i64; goods as usize];
    let mut owed = vec![[0i64; 3]; CUSTOMERS as usize];
    for (&id, o) in &orders {
        let (c, item, qty, price, status) =
            (o[O_CUSTOMER], o[O_ITEM], o[O_QTY], o[O_PRICE], o[O_STATUS]);
        if !(0..CUSTOMERS as i64).contains(&c) || !(0..goods as i64).contains(&item) {
            return fail(format!("order {id} names customer {c}, item {item}"));
        }
        numbers[T_ORDER as usize].push(o[O_NUMBER]);
        let c = c as usize;
        owed[c][C_ORDERS] += 1;
        let invoice = debtor.get(&doc_key(id, false));
        let payment = debtor.get(&doc_key(id, true));
        let mv = moves.get(&move_key(id, item as u64));
        let amount = qty * price;
        let docs_ok = match status {
            ORDERED => {
                on_order[item as usize] += qty;
                invoice.is_none() && payment.is_none() && mv.is_none()
            }
            DELIVERED | PAID => {
                let inv_ok = invoice.is_some_and(|d| d[D_WHO] == c as i64 && d[D_AMOUNT] == amount);
                let mv_ok = mv.is_some_and(|m| m[M_QTY] == -qty && m[M_TYPE] == M_DELIVERY);
                let pay_ok = match (status, payment) {
                    (DELIVERED, None) => true,
                    (PAID, Some(p)) => p[D_WHO] == c as i64 && p[D_AMOUNT] == amount,
                    _ => false,
                };
                inv_ok && mv_ok && pay_ok
            }
            s => return fail(format!("order {id} has status {s}")),
        };
        if !docs_ok {
            return fail(format!(
                "order {id} (status {status}) and its documents do not match: invoice {invoice:?}, \
                 payment {payment:?}, stock move {mv:?} — payments do not match invoices"
            ));
        }
    }
    for (&k, d) in &debtor {
        let order = k >> 1;
        if !orders.contains_key(&order) {
            return fail(format!(
                "customer document {k} names order {order}, which does not exist"
            ));
        }
        let c = d[D_WHO] as usize;
        if k & 1 == 0 {
            owed[c][C_INVOICED] += d[D_AMOUNT];
            numbers[T_DELIVERY as usize].push(d[D_NUMBER]);
        } else {
            owed[c][C_PAID] += d[D_AMOUNT];
            numbers[T_PAYMENT as usize].push(d[D_NUMBER]);
        }
    }

    // Items: on hand and on order as the moves and the orders say.
    for i in 0..goods {
        let row = with_row(db, STOCK, i, &mut buf, |r| {
            (r.int(ON_HAND), r.int(ON_ORDER))
        });
        let want = (INITIAL_STOCK + moved[i as usize], on_order[i as usize]);
        if row != Some(want) || want.0 < 0 {
            return fail(format!(
                "item {i}: (on hand, on order) is {row:?}, the moves and open orders say {want:?}"
            ));
        }
    }

    // Customers.
    for c in 0..CUSTOMERS {
        let row = with_row(db, DEBTORS, c, &mut buf, |r| {
            [r.int(C_ORDERS), r.int(C_INVOICED), r.int(C_PAID)]
        });
        let want = owed[c as usize];
        if row != Some(want) || want[C_PAID] > want[C_INVOICED] {
            return fail(format!(
                "customer {c}: (orders, invoiced, paid) is {row:?}, its documents say {want:?}"
            ));
        }
    }

    // Suppliers: documents, and each purchase's invoice the sum of its moves at cost.
    let mut supplier = vec![[0i64; 2]; SUPPLIERS_N as usize];
    for (&k, d) in &supp {
        let s = d[D_WHO];
        if !(0..SUPPLIERS_N as i64).contains(&s) {
            return fail(format!("supplier document {k} names supplier {s}"));
        }
        if k & 1 == 0 {
            let id = k >> 1;
            let at_cost: i64 = (0..goods)
                .map(|i| {
                    moves
                        .get(&move_key(id, i))
                        .map_or(0, |m| m[M_QTY] * FrontAccounting::price_cost(i).1)
                })
                .sum();
            if at_cost != d[D_AMOUNT] || !supp.contains_key(&doc_key(id, true)) {
                return fail(format!(
                    "purchase {id}: invoiced {}, its moves at cost {at_cost}, paid: {}",
                    d[D_AMOUNT],
                    supp.contains_key(&doc_key(id, true))
                ));
            }
            supplier[s as usize][S_INVOICED] += d[D_AMOUNT];
            numbers[T_SUPP_INVOICE as usize].push(d[D_NUMBER]);
        } else {
            supplier[s as usize][S_PAID] += d[D_AMOUNT];
            numbers[T_SUPP_PAYMENT as usize].push(d[D_NUMBER]);
        }
    }
    for s in 0..SUPPLIERS_N {
        let row = with_row(db, SUPPLIERS, s, &mut buf, |r| {
            [r.int(S_INVOICED), r.int(S_PAID)]
        });
        let want = supplier[s as usize];
        if row != Some(want) || want[1] > want[0] {
            return fail(format!(
                "supplier {s}: (invoiced, paid) is {row:?}, its documents say {want:?}"
            ));
        }
    }

    // Document numbers: as many as documents, none twice (adjustments: counted only).
    for t in 0..DOC_TYPES {
        let next = with_row(db, SYS_TYPES, t, &mut buf, |r| r.int(NEXT));
        let given = &numbers[t as usize];
        if next != Some(given.len() as i64) {
            return fail(format!(
                "document type {t}: next number {next:?}, but {} documents: a number lost or given twice",
                given.len()
            ));
        }
        if t != T_ADJUSTMENT {
            let distinct: BTreeSet<i64> = given.iter().copied().collect();
            if distinct.len() != given.len()
                || given.iter().any(|&n| n < 0 || n >= given.len() as i64)
            {
                return fail(format!("document type {t}: a number given twice"));
            }
        }
    }
    Ok(())
}
