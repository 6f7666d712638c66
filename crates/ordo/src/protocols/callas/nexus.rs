//! Nexus locks (Xie 2016, §4.3): every transaction takes a row's nexus lock before it reads or
//! writes the row. Across groups a nexus lock is an ordinary lock — two transactions of different
//! groups share it only if both read; within a group it never conflicts: the group's own
//! mechanism (Runtime Pipelining) orders its members. Requests queue FIFO (the kit's lock table),
//! so no group starves another.
//!
//! A mode is (group, read or write), at most [`MAX_GROUPS`] groups (the lock table keeps a bit per
//! mode in a 32-bit mask):
//!
//! ```text
//!               g:R   g:W   h:R   h:W        (g ≠ h)
//!        g:R     C     C     C     X
//!        g:W     C     C     X     X
//! ```

use crate::protocols::kit::lock_table::LockModes;

/// Groups a nexus lock tells apart.
pub const MAX_GROUPS: usize = 16;

/// A nexus lock mode: a group and whether it writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NexusMode {
    pub group: u8,
    pub write: bool,
}

impl NexusMode {
    pub fn read(group: u8) -> Self {
        NexusMode {
            group,
            write: false,
        }
    }
    pub fn write(group: u8) -> Self {
        NexusMode { group, write: true }
    }
}

/// Bits of every group's read modes (even indices) and write modes (odd ones).
const READS: u32 = 0x5555_5555;
const WRITES: u32 = 0xAAAA_AAAA;

impl LockModes for NexusMode {
    type Counts = [u32; 2 * MAX_GROUPS];

    #[inline]
    fn index(self) -> usize {
        2 * self.group as usize + self.write as usize
    }

    #[inline]
    fn conflicts(self) -> u32 {
        let own = 0b11 << (2 * self.group as u32);
        let others = if self.write { READS | WRITES } else { WRITES };
        others & !own
    }

    #[inline]
    fn covers(self, other: Self) -> bool {
        self.group == other.group && (self.write || !other.write)
    }

    #[inline]
    fn join(self, other: Self) -> Self {
        debug_assert_eq!(self.group, other.group, "one transaction, one group");
        NexusMode {
            group: self.group,
            write: self.write || other.write,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::kit::lock_table::{LockTable, Outcome};

    /// Whether `b` may be granted while `a` is held (by another owner), through the lock table.
    fn compatible(a: NexusMode, b: NexusMode) -> bool {
        let t: LockTable<NexusMode> = LockTable::new(4);
        assert_eq!(t.lock(1, 0, 7, a, false), Outcome::Granted);
        t.lock(2, 0, 7, b, false) == Outcome::Granted
    }

    #[test]
    fn within_a_group_nothing_conflicts() {
        for g in [0u8, 3, 15] {
            for (a, b) in [(false, false), (false, true), (true, false), (true, true)] {
                let m = |w| NexusMode { group: g, write: w };
                assert!(compatible(m(a), m(b)), "group {g}: {a} then {b}");
            }
        }
    }

    #[test]
    fn across_groups_only_two_reads_share() {
        let (g, h) = (1u8, 2u8);
        assert!(compatible(NexusMode::read(g), NexusMode::read(h)));
        assert!(!compatible(NexusMode::read(g), NexusMode::write(h)));
        assert!(!compatible(NexusMode::write(g), NexusMode::read(h)));
        assert!(!compatible(NexusMode::write(g), NexusMode::write(h)));
        // Group 15 against group 0: the masks' ends.
        assert!(!compatible(NexusMode::write(15), NexusMode::read(0)));
        assert!(compatible(NexusMode::read(15), NexusMode::read(0)));
    }

    #[test]
    fn the_matrix_is_symmetric() {
        for g in 0..MAX_GROUPS as u8 {
            for h in 0..MAX_GROUPS as u8 {
                for a in [false, true] {
                    for b in [false, true] {
                        let (x, y) = (
                            NexusMode { group: g, write: a },
                            NexusMode { group: h, write: b },
                        );
                        let xy = x.conflicts() & (1 << y.index()) != 0;
                        let yx = y.conflicts() & (1 << x.index()) != 0;
                        assert_eq!(xy, yx, "{x:?} {y:?}");
                        assert_eq!(xy, g != h && (a || b), "{x:?} {y:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_queued_other_group_request_holds_back_newcomers_fifo() {
        let t: LockTable<NexusMode> = LockTable::new(4);
        assert_eq!(t.lock(1, 0, 7, NexusMode::write(0), true), Outcome::Granted);
        assert_eq!(t.lock(2, 0, 7, NexusMode::read(1), true), Outcome::Waiting);
        // Same group as the holder, but behind a waiter: it queues (no starvation of group 1).
        assert_eq!(t.lock(3, 0, 7, NexusMode::write(0), true), Outcome::Waiting);
        t.unlock(1, 0, 7);
        assert!(t.is_granted(2, 0, 7, NexusMode::read(1)));
        assert!(!t.is_granted(3, 0, 7, NexusMode::write(0)));
        t.unlock(2, 0, 7);
        assert!(t.is_granted(3, 0, 7, NexusMode::write(0)));
    }
}
