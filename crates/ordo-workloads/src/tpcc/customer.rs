//! Selecting a customer by id or by last name (clause 2.5.2.2 / 2.6.2.2).
//!
//! By last name the transaction scans CUSTOMER_BY_NAME over `(w, d, name, *)`, sorts the matches by
//! `c_first` and takes the one at position ⌈n/2⌉ (the "middle" customer). The scan is its own piece,
//! declared as a range; the customer key it yields is declared by the pieces after it.

use super::schema::{col, cust_key, cust_name_key, CUSTOMER_BY_NAME};
use ordo::storage::ColumnSet;
use ordo::txn::{Abort, Access, Tx, TxResult};

/// How the customer is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum By {
    Id(u32),
    /// Last-name number 0..=999.
    Name(u32),
}

/// A customer lookup: the input, and the customer id once resolved.
#[derive(Clone, Debug)]
pub struct Lookup {
    pub w: u32,
    pub d: u32,
    pub by: By,
    /// The chosen customer (valid after [`Self::run`], or at once for [`By::Id`]).
    pub c: u32,
    matches: Vec<([u8; 16], u8, u32)>,
}

impl Default for Lookup {
    fn default() -> Self {
        Lookup {
            w: 1,
            d: 1,
            by: By::Id(1),
            c: 1,
            matches: Vec::with_capacity(16),
        }
    }
}

fn name_cols() -> ColumnSet {
    ColumnSet::of(&[col::CN_FIRST, col::CN_C_ID])
}

impl Lookup {
    pub fn set(&mut self, w: u32, d: u32, by: By) {
        self.w = w;
        self.d = d;
        self.by = by;
        if let By::Id(c) = by {
            self.c = c;
        }
    }

    /// The CUSTOMER key (after [`Self::run`]).
    pub fn key(&self) -> u64 {
        cust_key(self.w, self.d, self.c)
    }

    /// Whether the lookup needs its own piece (a scan of the name index).
    pub fn by_name(&self) -> bool {
        matches!(self.by, By::Name(_))
    }

    /// The declaration of the name scan (nothing when by id).
    pub fn declare(&self, out: &mut Vec<Access>) {
        if let By::Name(n) = self.by {
            out.push(Access::scan(
                CUSTOMER_BY_NAME,
                cust_name_key(self.w, self.d, n, 0),
                cust_name_key(self.w, self.d, n, 4095),
                name_cols(),
            ));
        }
    }

    /// Resolves a by-name lookup to the middle customer by first name.
    pub fn run<T: Tx>(&mut self, tx: &mut T) -> TxResult<()> {
        let By::Name(n) = self.by else {
            return Ok(());
        };
        self.matches.clear();
        let matches = &mut self.matches;
        tx.scan(
            CUSTOMER_BY_NAME,
            cust_name_key(self.w, self.d, n, 0),
            cust_name_key(self.w, self.d, n, 4095),
            name_cols(),
            |_, row| {
                let f = row.str(col::CN_FIRST);
                let mut first = [0u8; 16];
                let len = f.len().min(16);
                first[..len].copy_from_slice(&f[..len]);
                matches.push((first, len as u8, row.int(col::CN_C_ID) as u32));
                true
            },
        )?;
        if self.matches.is_empty() {
            return Err(Abort::user(format!(
                "no customer with last name {n} in district ({}, {})",
                self.w, self.d
            )));
        }
        self.matches.sort_unstable_by(|a, b| {
            a.0[..a.1 as usize]
                .cmp(&b.0[..b.1 as usize])
                .then(a.2.cmp(&b.2))
        });
        self.c = self.matches[(self.matches.len() - 1) / 2].2;
        Ok(())
    }
}
