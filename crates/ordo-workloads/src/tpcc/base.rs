//! TPC-C BASE-ified for Salt (Xie 2016, §3.5–3.6): where each transaction type is cut into
//! alkaline subtransactions, and in which order the types are BASE-ified (`--base-ified N|raw`,
//! [`crate::base_ified`]). Only `salt` and `salt-local` read the cuts; every other protocol runs
//! every type ACID.
//!
//! The thesis BASE-ified the two types whose latency grew out of proportion with load —
//! New-Order and Payment (Fig. 3.6, our default `--base-ified 2`) — then more, one at a time
//! (Fig. 3.8). Our order: [`ORDER`].
//!
//! | rank | type        | alkaline subtransactions (pieces)                 | why there |
//! |------|-------------|---------------------------------------------------|-----------|
//! | 0    | New-Order   | [0 items, 1 warehouse/customer reads] [2 `d_next_o_id++`] [3 stock, 4 inserts] | Fig. 3.5: the district counter in its own subtransaction, so the next New-Order of the district waits only for it, not for ~25 stock updates and inserts; the item check (the 1% rollback) comes before acceptance |
//! | 1    | Payment     | [0 `w_ytd`] [1 `d_ytd`] [2 lookup, 3 customer, 4 history] | the warehouse row every Payment of the warehouse updates, held for one operation and a commit instead of the whole payment; the district's likewise |
//! | 2    | Delivery    | one per district: [A B C] × 10                    | a district's delivery is independent of the others'; each NEW-ORDER delete and customer credit goes as soon as its district is done |
//! | 3    | Stock-Level | one per piece                                     | read-only: at read committed it holds no long lock, so cutting it changes nothing (the thesis's flat tail) |
//! | 4    | Order-Status| one per piece                                     | as Stock-Level |
//!
//! Credit Check (TPC-C++) is never BASE-ified but under `raw`. With `raw` every type has one
//! alkaline subtransaction per piece (the thesis's pure-BASE bound).
//!
//! The counters are one record each, in a piece of their own: under `salt-local` (§3.4.4) such an
//! alkaline subtransaction is **local** — its lock turns saline as soon as its operation is done,
//! before the replication and commit delays — which is where the thesis says most of Salt's gain
//! on contended rows comes from. Under `salt` it holds the row through its operation and commit.
//!
//! Why these cuts are safe for TPC-C's own invariants: to ACID transactions a BASE transaction is
//! atomic (Salt Isolation), and an accepted BASE transaction always finishes, so the consistency
//! conditions hold after every run; between BASE New-Orders, the release rules keep a New-Order
//! that read another's `d_next_o_id` from releasing its rows before that one, so an ACID Delivery
//! never finds order o+1 delivered-ready while order o is still to be inserted. No later
//! subtransaction can fail by its own logic (New-Order's rollback is in its first), so the
//! handlers ([`ordo::txn::Program::alkaline_failed`]) are never called; the default ends the
//! transaction, which keeps what committed.

use super::mix::Kind;
use crate::base_ified::{every_piece, BaseIfied, Cut};

/// The order in which the types are BASE-ified (see the module doc).
pub const ORDER: [Kind; 5] = [
    Kind::NewOrder,
    Kind::Payment,
    Kind::Delivery,
    Kind::StockLevel,
    Kind::OrderStatus,
];

/// The default: New-Order and Payment, as the thesis's Fig. 3.6.
pub const DEFAULT: BaseIfied = BaseIfied::Types(2);

/// How `kind` is cut under `b`.
pub fn cut(b: BaseIfied, kind: Kind) -> Cut {
    b.cut_in(&ORDER, &kind)
}

/// Appends the alkaline starts of a `kind` transaction of `pieces` pieces, cut `cut`.
pub fn alkaline_starts(kind: Kind, pieces: usize, cut: Cut, out: &mut Vec<usize>) {
    match cut {
        Cut::Acid => {}
        Cut::Raw => every_piece(pieces, out),
        Cut::Base => match kind {
            // The district counter (piece 2) alone.
            Kind::NewOrder => out.extend([2, 3]),
            // The warehouse's total (piece 0) alone, then the district's (piece 1).
            Kind::Payment => out.extend([1, 2]),
            // Three pieces per district.
            Kind::Delivery => out.extend((3..pieces).step_by(3)),
            Kind::StockLevel | Kind::OrderStatus | Kind::CreditCheck => every_piece(pieces, out),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn starts(kind: Kind, pieces: usize, b: BaseIfied) -> Vec<usize> {
        let mut out = Vec::new();
        alkaline_starts(kind, pieces, cut(b, kind), &mut out);
        out
    }

    #[test]
    fn the_default_base_ifies_new_order_and_payment_as_the_thesis() {
        assert_eq!(starts(Kind::NewOrder, 5, DEFAULT), [2, 3]);
        assert_eq!(starts(Kind::Payment, 5, DEFAULT), [1, 2]);
        for k in [
            Kind::Delivery,
            Kind::StockLevel,
            Kind::OrderStatus,
            Kind::CreditCheck,
        ] {
            assert_eq!(starts(k, 30, DEFAULT), [] as [usize; 0], "{k:?}");
        }
    }

    #[test]
    fn each_count_adds_the_next_type_and_raw_cuts_every_piece() {
        assert_eq!(
            starts(Kind::Delivery, 30, BaseIfied::Types(2)),
            [] as [usize; 0]
        );
        assert_eq!(
            starts(Kind::Delivery, 30, BaseIfied::Types(3)),
            [3, 6, 9, 12, 15, 18, 21, 24, 27]
        );
        assert_eq!(starts(Kind::StockLevel, 3, BaseIfied::Types(4)), [1, 2]);
        assert_eq!(
            starts(Kind::OrderStatus, 3, BaseIfied::Types(4)),
            [] as [usize; 0]
        );
        assert_eq!(starts(Kind::OrderStatus, 3, BaseIfied::Types(5)), [1, 2]);
        assert_eq!(
            starts(Kind::NewOrder, 4, BaseIfied::Types(0)),
            [] as [usize; 0]
        );
        assert_eq!(starts(Kind::NewOrder, 4, BaseIfied::Raw), [1, 2, 3]);
        assert_eq!(
            starts(Kind::CreditCheck, 3, BaseIfied::Types(5)),
            [] as [usize; 0]
        );
        assert_eq!(starts(Kind::CreditCheck, 3, BaseIfied::Raw), [1, 2]);
    }
}
