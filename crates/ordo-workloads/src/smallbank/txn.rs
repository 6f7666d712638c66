//! The five SmallBank transaction programs, piece by piece.
//!
//! Each line of the thesis's Berkeley DB code (§5.1.1) is one piece; pieces after the name lookup
//! declare the customer id it found, so they depend on it (`depends_on`). Every update is a
//! read-modify-write of the balance column, exactly the read and write sets of the thesis:
//!
//! | type  | pieces                                                                            |
//! |-------|-----------------------------------------------------------------------------------|
//! | Bal   | 0 `ID = account.get(N)` · 1 read `saving[ID]` · 2 read `checking[ID]`               |
//! | DC    | 0 lookup (V < 0 rolls back) · 1 `checking[ID] += V`                                |
//! | TS    | 0 lookup · 1 `saving[ID] += V` (rolls back if negative)                            |
//! | Amg   | 0 lookup N1 · 1 lookup N2 · 2 `saving[ID1] = 0` · 3 `checking[ID1] = 0` · 4 `checking[ID2] += both` |
//! | WC    | 0 lookup · 1 read `saving[ID]` · 2 `checking[ID] -= V` (or `V + 1` if savings + checking < V) |
//!
//! Amalgamate touches the rows in the thesis's order (N1's savings, N1's checking, N2's checking) with the
//! same read and write sets; each read of a row it then writes is one read-modify-write. Its N2 update
//! *adds* N1's funds, as §2.8.3 defines it ("increases the checking balance for N2 by the sum"); the
//! Berkeley DB listing of §5.1.1 writes `checking.put(ID2, savings(ID1) + checking(ID1))`, which would
//! drop N2's own balance — money conservation needs the definition, not the listing's shorthand.

use super::{ACCOUNT, BALANCE, CHECKING, CUSTID, SAVING};
use crate::ledger::Entry;
use ordo::storage::ColumnSet;
use ordo::txn::{Abort, Access, Program, Tx, TxResult};
use std::hint::black_box;

/// The transaction types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Balance,
    DepositChecking,
    TransactSavings,
    Amalgamate,
    WriteCheck,
}

impl Kind {
    /// Every type (drawn uniformly: 20% each).
    pub const ALL: [Kind; 5] = [
        Kind::Balance,
        Kind::DepositChecking,
        Kind::TransactSavings,
        Kind::Amalgamate,
        Kind::WriteCheck,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Kind::Balance => "Balance",
            Kind::DepositChecking => "DepositChecking",
            Kind::TransactSavings => "TransactSavings",
            Kind::Amalgamate => "Amalgamate",
            Kind::WriteCheck => "WriteCheck",
        }
    }
}

const BAL: ColumnSet = ColumnSet::one(BALANCE);
const ID: ColumnSet = ColumnSet::one(CUSTID);

/// One SmallBank transaction: its type, parameters, and the values its pieces pass on.
#[derive(Clone)]
pub struct SmallBankTxn {
    pub kind: Kind,
    /// Names (account keys) N1 and N2 (N2 only for Amalgamate).
    pub n1: u64,
    pub n2: u64,
    /// The amount V.
    pub v: i64,
    // Outputs of earlier pieces.
    id1: u64,
    id2: u64,
    saving1: i64,
    checking1: i64,
    ledger: Entry,
}

impl SmallBankTxn {
    pub(crate) fn new(ledger: Entry) -> Self {
        SmallBankTxn {
            kind: Kind::Balance,
            n1: 0,
            n2: 0,
            v: 0,
            id1: 0,
            id2: 0,
            saving1: 0,
            checking1: 0,
            ledger,
        }
    }

    /// Makes this program the transaction `kind(n1[, n2], v)` of generator thread `thread`.
    pub fn set(&mut self, kind: Kind, n1: u64, n2: u64, v: i64, thread: u32) {
        self.ledger.settle(thread);
        self.kind = kind;
        self.n1 = n1;
        self.n2 = n2;
        self.v = v;
    }

    /// `ID = account.get(N)`; a missing name rolls back.
    fn lookup<T: Tx>(tx: &mut T, name: u64) -> TxResult<u64> {
        match tx.get(ACCOUNT, name, ID)? {
            Some(row) => Ok(row.int(CUSTID) as u64),
            None => Err(Abort::user("name not found")),
        }
    }

    fn read_balance<T: Tx>(tx: &mut T, table: u32, id: u64) -> TxResult<i64> {
        match tx.get(table, id, BAL)? {
            Some(row) => Ok(row.int(BALANCE)),
            None => Err(Abort::user("account not found")),
        }
    }

    /// `table[id] = f(table[id])`, returning the old balance; `f` returning `None` rolls back (and
    /// writes nothing).
    fn update_balance<T: Tx>(
        tx: &mut T,
        table: u32,
        id: u64,
        f: impl FnOnce(i64) -> Option<i64>,
    ) -> TxResult<i64> {
        let r = tx.update(table, id, BAL, |row| {
            let old = row.int(BALANCE);
            let new = f(old)?;
            row.set_int(BALANCE, new);
            Some(old)
        })?;
        match r {
            Some(Some(old)) => Ok(old),
            Some(None) => Err(Abort::user("balance would become negative")),
            None => Err(Abort::user("account not found")),
        }
    }
}

impl Program for SmallBankTxn {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn pieces(&self) -> usize {
        match self.kind {
            Kind::Balance | Kind::WriteCheck => 3,
            Kind::DepositChecking | Kind::TransactSavings => 2,
            Kind::Amalgamate => 5,
        }
    }

    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        use Kind::*;
        out.push(match (self.kind, piece) {
            (_, 0) => Access::read(ACCOUNT, self.n1, ID),
            (Amalgamate, 1) => Access::read(ACCOUNT, self.n2, ID),
            (Balance | WriteCheck, 1) => Access::read(SAVING, self.id1, BAL),
            (Balance, _) => Access::read(CHECKING, self.id1, BAL),
            (DepositChecking | WriteCheck, _) => Access::update(CHECKING, self.id1, BAL, BAL),
            (TransactSavings, _) => Access::update(SAVING, self.id1, BAL, BAL),
            (Amalgamate, 2) => Access::update(SAVING, self.id1, BAL, BAL),
            (Amalgamate, 3) => Access::update(CHECKING, self.id1, BAL, BAL),
            (Amalgamate, _) => Access::update(CHECKING, self.id2, BAL, BAL),
        });
    }

    fn depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        match (self.kind, piece) {
            (_, 0) | (Kind::Amalgamate, 1) => {}
            (Kind::WriteCheck, 2) => out.extend([0, 1]),
            (Kind::Amalgamate, 4) => out.extend([1, 2, 3]),
            _ => out.push(0),
        }
    }

    fn commit_point(&self) -> Option<usize> {
        Some(match self.kind {
            Kind::Amalgamate => 1,
            Kind::TransactSavings => 1,
            _ => 0,
        })
    }

    fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()> {
        use Kind::*;
        if piece == 0 {
            self.ledger.retract();
        }
        match (self.kind, piece) {
            (DepositChecking, 0) if self.v < 0 => return Err(Abort::user("negative deposit")),
            (_, 0) => self.id1 = Self::lookup(tx, self.n1)?,
            (Amalgamate, 1) => self.id2 = Self::lookup(tx, self.n2)?,
            (Balance, 1) => self.saving1 = Self::read_balance(tx, SAVING, self.id1)?,
            (Balance, _) => {
                let c = Self::read_balance(tx, CHECKING, self.id1)?;
                black_box(self.saving1 + c);
            }
            (DepositChecking, _) => {
                let v = self.v;
                Self::update_balance(tx, CHECKING, self.id1, |b| Some(b + v))?;
                self.ledger.record(v);
            }
            (TransactSavings, _) => {
                let v = self.v;
                Self::update_balance(tx, SAVING, self.id1, |b| (b + v >= 0).then_some(b + v))?;
                self.ledger.record(v);
            }
            (Amalgamate, 2) => {
                self.saving1 = Self::update_balance(tx, SAVING, self.id1, |_| Some(0))?
            }
            (Amalgamate, 3) => {
                self.checking1 = Self::update_balance(tx, CHECKING, self.id1, |_| Some(0))?
            }
            (Amalgamate, _) => {
                let moved = self.saving1 + self.checking1;
                Self::update_balance(tx, CHECKING, self.id2, |b| Some(b + moved))?;
            }
            (WriteCheck, 1) => self.saving1 = Self::read_balance(tx, SAVING, self.id1)?,
            (WriteCheck, _) => {
                let (s, v) = (self.saving1, self.v);
                let old = Self::update_balance(tx, CHECKING, self.id1, |c| {
                    Some(if s + c < v { c - v - 1 } else { c - v })
                })?;
                self.ledger.record(if s + old < v { -v - 1 } else { -v });
            }
        }
        Ok(())
    }
}
