//! `ticketing`'s invariants on a run's final state (the module doc's list).

use super::*;
use crate::inspect::with_row;

/// A row of `orders` or `reservation`, as the check needs it.
#[derive(Clone, Copy)]
struct Row {
    customer: u64,
    category: i64,
    seat: i64,
    /// Orders: price + fee, and the status.
    total: i64,
    status: i64,
}

/// Every present key of `table` (an ordered table) with its row.
fn rows<M: Default + Send + Sync>(
    db: &Database<M>,
    table: TableId,
    buf: &mut Vec<u64>,
    f: impl Fn(ordo::storage::RowRef<'_>) -> Row,
) -> HashMap<u64, Row> {
    let keys: Vec<u64> = db.table(table).range(0, u64::MAX).map(|(k, _)| k).collect();
    keys.into_iter()
        .filter_map(|k| with_row(db, table, k, buf, &f).map(|r| (k, r)))
        .collect()
}

fn customer_of(id: u64, c: u64) -> Result<usize, Violation> {
    if c < CUSTOMERS {
        Ok(c as usize)
    } else {
        Err(format!("{id} names customer {c}, who does not exist").into())
    }
}

pub(super) fn check<M: Default + Send + Sync>(
    w: &Ticketing,
    db: &Database<M>,
) -> Result<(), Violation> {
    let seats = w.cfg.seats;
    let mut buf = Vec::new();
    // Per customer: live orders, their total, unrefunded payments, reservations.
    let mut owed = vec![[0i64; 4]; CUSTOMERS as usize];
    let reservations = rows(db, RESERVATION, &mut buf, |r| Row {
        customer: r.int(R_CUSTOMER) as u64,
        category: r.int(R_CATEGORY),
        seat: r.int(R_SEAT),
        total: 0,
        status: 0,
    });
    let orders = rows(db, ORDERS, &mut buf, |r| Row {
        customer: r.int(O_CUSTOMER) as u64,
        category: r.int(O_CATEGORY),
        seat: r.int(O_SEAT),
        total: r.int(O_PRICE) + r.int(O_FEE),
        status: r.int(O_STATUS),
    });
    let payments = rows(db, PAYMENT, &mut buf, |r| Row {
        customer: r.int(P_CUSTOMER) as u64,
        category: 0,
        seat: 0,
        total: r.int(P_AMOUNT),
        status: r.int(P_REFUNDED),
    });
    let in_range =
        |k: i64, s: i64| (0..CATEGORIES as i64).contains(&k) && (0..seats as i64).contains(&s);
    let seat_of = |k: i64, s: i64, buf: &mut Vec<u64>| {
        with_row(db, SEAT, k as u64 * seats + s as u64, buf, |r| {
            (r.int(STATUS), r.int(HOLDER))
        })
    };

    // Reservations: each one's seat is reserved for it.
    for (&id, r) in &reservations {
        if !in_range(r.category, r.seat)
            || seat_of(r.category, r.seat, &mut buf) != Some((RESERVED, id as i64))
        {
            return Err(format!(
                "reservation {id} names seat {}/{}, which is not reserved for it",
                r.category, r.seat
            )
            .into());
        }
        owed[customer_of(id, r.customer)?][3] += 1;
    }

    // Orders: a live one's seat is sold to it, a deleted one's is not; payments match.
    let mut live = [0i64; CATEGORIES as usize];
    let mut deleted = [0i64; CATEGORIES as usize];
    for (&id, o) in &orders {
        if !in_range(o.category, o.seat) {
            return Err(format!(
                "order {id} names seat {}/{}, which does not exist",
                o.category, o.seat
            )
            .into());
        }
        let c = customer_of(id, o.customer)?;
        let seat = seat_of(o.category, o.seat, &mut buf);
        let holds = seat == Some((SOLD_TO, id as i64));
        let payment = payments.get(&id);
        match o.status {
            ORDERED | PAID => {
                if !holds {
                    return Err(format!(
                        "order {id} names seat {}/{}, which is {seat:?} (status, holder), not sold to it: \
                         a seat sold twice or an order without its seat",
                        o.category, o.seat
                    )
                    .into());
                }
                live[o.category as usize] += 1;
                owed[c][0] += 1;
                owed[c][1] += o.total;
                let paid_ok = match (o.status, payment) {
                    (ORDERED, None) => true,
                    (PAID, Some(p)) => {
                        p.total == o.total && p.status == 0 && p.customer == o.customer
                    }
                    _ => false,
                };
                if !paid_ok {
                    return Err(format!(
                        "order {id} (status {}, total {}) has payment {:?} (amount, refunded): payments do not match orders",
                        o.status,
                        o.total,
                        payment.map(|p| (p.total, p.status))
                    )
                    .into());
                }
            }
            DELETED => {
                if holds {
                    return Err(format!(
                        "deleted order {id} still holds seat {}/{}",
                        o.category, o.seat
                    )
                    .into());
                }
                deleted[o.category as usize] += 1;
                if let Some(p) = payment {
                    if p.status != 1 || p.total != o.total {
                        return Err(format!(
                            "deleted order {id}'s payment of {} (order total {}) is not refunded",
                            p.total, o.total
                        )
                        .into());
                    }
                }
            }
            s => return Err(format!("order {id} has status {s}").into()),
        }
    }
    for (&id, p) in &payments {
        if !orders.contains_key(&id) {
            return Err(format!("payment {id} pays an order that does not exist").into());
        }
        if p.status == 0 {
            owed[customer_of(id, p.customer)?][2] += p.total;
        }
    }

    // Seats, and the categories' counts.
    for k in 0..CATEGORIES {
        let (sold, returned) = with_row(db, CATEGORY, k, &mut buf, |r| {
            (r.int(SOLD), r.int(RETURNED))
        })
        .ok_or("a category is missing")?;
        let mut marked = 0;
        for s in 0..seats {
            let (status, holder) =
                seat_of(k as i64, s as i64, &mut buf).ok_or(format!("seat {k}/{s} missing"))?;
            let names_it =
                |r: Option<&Row>| r.is_some_and(|r| (r.category, r.seat) == (k as i64, s as i64));
            let ok = match status {
                FREE => holder == 0,
                RESERVED => names_it(reservations.get(&(holder as u64))),
                SOLD_TO => {
                    marked += 1;
                    names_it(orders.get(&(holder as u64)))
                }
                _ => false,
            };
            if !ok {
                return Err(format!(
                    "seat {k}/{s} has status {status} and holder {holder}, which does not name it"
                )
                .into());
            }
        }
        let (live, deleted) = (live[k as usize], deleted[k as usize]);
        if (sold, returned) != (marked, deleted) || live != sold {
            return Err(format!(
                "category {k}: {sold} sold and {returned} returned counted, {marked} seats marked sold, \
                 {live} live and {deleted} deleted orders"
            )
            .into());
        }
    }

    // Customers.
    for (c, want) in owed.iter().enumerate() {
        let got = with_row(db, CUSTOMER, c as u64, &mut buf, |r| {
            [
                r.int(C_ORDERS),
                r.int(C_SPENT),
                r.int(C_PAID),
                r.int(C_CART),
            ]
        })
        .ok_or(format!("customer {c} missing"))?;
        if got != *want {
            return Err(format!(
                "customer {c} counts (orders, spent, paid, cart) {got:?}, but the orders, payments \
                 and reservations add up to {want:?}"
            )
            .into());
        }
    }
    Ok(())
}
