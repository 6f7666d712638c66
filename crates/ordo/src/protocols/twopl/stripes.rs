//! Lock stripes: where the locks of **conflict units** live (`locking-coarse`, and `2pl-ordered` for
//! the units a program names at the fine grain).
//!
//! A record's lock lives beside the record, but a unit — all of a warehouse's Stock rows, a
//! district's orders ([`crate::txn::Program::conflict_units`]) — has no row of its own to sit
//! beside, and may cover keys that do not exist yet. So unit locks are a fixed array of lock words
//! ([`TicketLock`]), and unit `u` of table `t` uses the word at a hash of `(t, u)`: a *lock stripe*.
//! Two units that hash to one stripe share its lock, which only adds conflicts (never loses one);
//! a transaction that names both takes the stripe once, in the stronger mode, so it never waits for
//! itself ([`super::lock_order`]). With [`STRIPES`] words and TPC-C's units (ten districts and one
//! Stock unit per warehouse) two given units collide with probability 1/4096.
//!
//! Each word has its cache lines to itself: neighbouring stripes belong to unrelated units.

use crate::protocols::kit::lock_request::lock_id;
use crate::protocols::kit::ticket::TicketLock;
use crate::storage::TableId;
use crossbeam_utils::CachePadded;

/// How many stripes a protocol instance has.
pub const STRIPES: usize = 4096;

/// The unit locks (see the module docs).
pub struct Stripes {
    locks: Box<[CachePadded<TicketLock>]>,
}

impl Stripes {
    /// `n` stripes (a power of two).
    pub fn new(n: usize) -> Self {
        assert!(n.is_power_of_two(), "stripes: {n} is not a power of two");
        Stripes {
            locks: (0..n)
                .map(|_| CachePadded::new(TicketLock::default()))
                .collect(),
        }
    }

    /// The stripe of unit `unit` of table `table`.
    #[inline]
    pub fn index(&self, table: TableId, unit: u64) -> u32 {
        let h = lock_id(table, unit).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // The high bits of the product mix every input bit; keep as many as there are stripes.
        (h >> (64 - self.locks.len().trailing_zeros()).min(63)) as u32
            & (self.locks.len() as u32 - 1)
    }

    /// The lock of stripe `i`.
    #[inline]
    pub fn get(&self, i: u32) -> &TicketLock {
        &self.locks[i as usize]
    }

    /// Whether no stripe is held or waited for (tests, diagnostics).
    pub fn all_free(&self) -> bool {
        self.locks.iter().all(|l| l.is_free())
    }
}

impl Default for Stripes {
    fn default() -> Self {
        Stripes::new(STRIPES)
    }
}
