//! The six lock kinds of Salt and Table 3.2's compatibility matrix, as the kit lock table's
//! [`LockModes`].
//!
//! ```text
//!              ACID-R  ACID-W  alk-R  alk-W  sal-R  sal-W        (C compatible, X conflict)
//!   ACID-R       C       X       C      X      C      X
//!   ACID-W       X       X       X      X      X      X
//!   alk-R        C       X       C      X      C      C
//!   alk-W        X       X       X      X      C      C
//!   sal-R        C       X       C      C      C      C
//!   sal-W        X       X       C      C      C      C
//! ```
//!
//! ACID and alkaline locks conflict unless both read (the upper-left 4×4); saline locks conflict
//! only with ACID locks, and only when not both read; they never conflict with alkaline or saline
//! locks — BASE transactions see each other's states at alkaline boundaries.
//!
//! **Covering and joining.** A transaction is ACID or BASE, so one owner asks for ACID modes only
//! or BASE modes only. ACID-W covers ACID-R. Among BASE modes, a mode covers another when it is at
//! least as *alkaline* and at least as *writing*: alk-W covers all four, alk-R covers sal-R, sal-W
//! covers sal-R. A holder asking for a mode its own does not cover converts to the join (the more
//! alkaline, the more writing of the two: sal-W asking for alk-R converts to alk-W — stronger than
//! needed, and only until the alkaline subtransaction ends, when it is downgraded back to sal-W).

use crate::protocols::kit::lock_table::LockModes;

/// A Salt lock mode (Table 3.2's rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum SaltMode {
    AcidR = 0,
    AcidW = 1,
    AlkR = 2,
    AlkW = 3,
    SalR = 4,
    SalW = 5,
}

/// Every mode, in Table 3.2's order.
pub const ALL: [SaltMode; 6] = [
    SaltMode::AcidR,
    SaltMode::AcidW,
    SaltMode::AlkR,
    SaltMode::AlkW,
    SaltMode::SalR,
    SaltMode::SalW,
];

/// Table 3.2, row by row (`true`: compatible).
const TABLE: [[bool; 6]; 6] = [
    // ACID-R ACID-W alk-R  alk-W  sal-R  sal-W
    [true, false, true, false, true, false],    // ACID-R
    [false, false, false, false, false, false], // ACID-W
    [true, false, true, false, true, true],     // alk-R
    [false, false, false, false, true, true],   // alk-W
    [true, false, true, true, true, true],      // sal-R
    [false, false, true, true, true, true],     // sal-W
];

impl SaltMode {
    /// Whether `self` and `other` may be held at once by two transactions (Table 3.2).
    #[inline]
    pub fn compatible(self, other: SaltMode) -> bool {
        TABLE[self as usize][other as usize]
    }
    /// An ACID lock.
    #[inline]
    pub fn is_acid(self) -> bool {
        matches!(self, SaltMode::AcidR | SaltMode::AcidW)
    }
    /// An alkaline lock.
    #[inline]
    pub fn is_alkaline(self) -> bool {
        matches!(self, SaltMode::AlkR | SaltMode::AlkW)
    }
    /// A saline lock.
    #[inline]
    pub fn is_saline(self) -> bool {
        matches!(self, SaltMode::SalR | SaltMode::SalW)
    }
    /// A write lock.
    #[inline]
    pub fn is_write(self) -> bool {
        matches!(self, SaltMode::AcidW | SaltMode::AlkW | SaltMode::SalW)
    }
    /// The BASE mode that is alkaline or saline, reading or writing.
    #[inline]
    pub fn base(alkaline: bool, write: bool) -> SaltMode {
        match (alkaline, write) {
            (true, true) => SaltMode::AlkW,
            (true, false) => SaltMode::AlkR,
            (false, true) => SaltMode::SalW,
            (false, false) => SaltMode::SalR,
        }
    }
    /// What an alkaline lock becomes at the end of its subtransaction (a saline lock of the same
    /// kind); any other mode stays as it is.
    #[inline]
    pub fn saline(self) -> SaltMode {
        match self {
            SaltMode::AlkR => SaltMode::SalR,
            SaltMode::AlkW => SaltMode::SalW,
            m => m,
        }
    }
}

impl LockModes for SaltMode {
    type Counts = [u32; 6];
    #[inline]
    fn index(self) -> usize {
        self as usize
    }
    #[inline]
    fn conflicts(self) -> u32 {
        let row = &TABLE[self as usize];
        (0..6).filter(|&j| !row[j]).fold(0, |m, j| m | 1 << j)
    }
    #[inline]
    fn covers(self, other: Self) -> bool {
        if self == other {
            return true;
        }
        match (self.is_acid(), other.is_acid()) {
            (true, true) => self == SaltMode::AcidW,
            (false, false) => {
                (self.is_alkaline() || !other.is_alkaline())
                    && (self.is_write() || !other.is_write())
            }
            _ => false,
        }
    }
    #[inline]
    fn join(self, other: Self) -> Self {
        if self.is_acid() || other.is_acid() {
            if self == SaltMode::AcidR && other == SaltMode::AcidR {
                return SaltMode::AcidR;
            }
            return SaltMode::AcidW;
        }
        SaltMode::base(
            self.is_alkaline() || other.is_alkaline(),
            self.is_write() || other.is_write(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::SaltMode::*;
    use super::*;
    use crate::protocols::kit::lock_table::{LockTable, Outcome};

    /// One cell of Table 3.2, checked the way a transaction meets it: owner 1 holds `held`, owner 2
    /// asks for `want` without waiting; granted iff the cell says compatible. Also checks the
    /// matrix is symmetric at that cell and that the lock table leaves nothing behind.
    fn cell(held: SaltMode, want: SaltMode, compatible: bool) {
        assert_eq!(held.compatible(want), compatible, "{held:?} / {want:?}");
        assert_eq!(
            want.compatible(held),
            compatible,
            "symmetric {want:?} / {held:?}"
        );
        let t: LockTable<SaltMode> = LockTable::new(8);
        assert_eq!(t.lock(1, 0, 1, held, false), Outcome::Granted);
        let got = t.lock(2, 0, 1, want, false);
        assert_eq!(
            got,
            if compatible {
                Outcome::Granted
            } else {
                Outcome::Conflict
            },
            "lock table: {want:?} requested while {held:?} held"
        );
        t.unlock(1, 0, 1);
        if compatible {
            t.unlock(2, 0, 1);
        }
        assert_eq!((t.heads_in_use(), t.requests()), (0, 0));
    }

    /// Table 3.2's 36 cells, one named test each (C: compatible, X: conflict).
    macro_rules! table_3_2 {
        ($($name:ident: $held:ident, $want:ident => $c:literal;)*) => {
            $(#[test] fn $name() { cell($held, $want, $c); })*
            /// The macro lists every cell exactly once.
            #[test]
            fn table_3_2_has_36_cells() {
                let cells: std::collections::HashSet<(SaltMode, SaltMode)> =
                    [$(($held, $want)),*].into_iter().collect();
                assert_eq!(cells.len(), 36);
            }
        };
    }

    table_3_2! {
        acid_r_acid_r: AcidR, AcidR => true;
        acid_r_acid_w: AcidR, AcidW => false;
        acid_r_alk_r: AcidR, AlkR => true;
        acid_r_alk_w: AcidR, AlkW => false;
        acid_r_sal_r: AcidR, SalR => true;
        acid_r_sal_w: AcidR, SalW => false;
        acid_w_acid_r: AcidW, AcidR => false;
        acid_w_acid_w: AcidW, AcidW => false;
        acid_w_alk_r: AcidW, AlkR => false;
        acid_w_alk_w: AcidW, AlkW => false;
        acid_w_sal_r: AcidW, SalR => false;
        acid_w_sal_w: AcidW, SalW => false;
        alk_r_acid_r: AlkR, AcidR => true;
        alk_r_acid_w: AlkR, AcidW => false;
        alk_r_alk_r: AlkR, AlkR => true;
        alk_r_alk_w: AlkR, AlkW => false;
        alk_r_sal_r: AlkR, SalR => true;
        alk_r_sal_w: AlkR, SalW => true;
        alk_w_acid_r: AlkW, AcidR => false;
        alk_w_acid_w: AlkW, AcidW => false;
        alk_w_alk_r: AlkW, AlkR => false;
        alk_w_alk_w: AlkW, AlkW => false;
        alk_w_sal_r: AlkW, SalR => true;
        alk_w_sal_w: AlkW, SalW => true;
        sal_r_acid_r: SalR, AcidR => true;
        sal_r_acid_w: SalR, AcidW => false;
        sal_r_alk_r: SalR, AlkR => true;
        sal_r_alk_w: SalR, AlkW => true;
        sal_r_sal_r: SalR, SalR => true;
        sal_r_sal_w: SalR, SalW => true;
        sal_w_acid_r: SalW, AcidR => false;
        sal_w_acid_w: SalW, AcidW => false;
        sal_w_alk_r: SalW, AlkR => true;
        sal_w_alk_w: SalW, AlkW => true;
        sal_w_sal_r: SalW, SalR => true;
        sal_w_sal_w: SalW, SalW => true;
    }

    #[test]
    fn covering_and_joining_stay_within_acid_or_base() {
        assert!(AcidW.covers(AcidR) && !AcidR.covers(AcidW));
        assert!(AlkW.covers(AlkR) && AlkW.covers(SalW) && AlkW.covers(SalR));
        assert!(AlkR.covers(SalR) && !AlkR.covers(SalW));
        assert!(SalW.covers(SalR) && !SalW.covers(AlkR));
        assert!(!AcidW.covers(SalR) && !AlkW.covers(AcidR));
        assert_eq!(SalW.join(AlkR), AlkW);
        assert_eq!(SalR.join(AlkR), AlkR);
        assert_eq!(AcidR.join(AcidW), AcidW);
        for m in ALL {
            assert!(!m.saline().is_alkaline());
            assert!(m.covers(m.saline()) || m.is_acid());
        }
    }

    #[test]
    fn an_alkaline_lock_downgraded_to_saline_lets_other_alkaline_locks_in_but_not_acid() {
        let t: LockTable<SaltMode> = LockTable::new(8);
        assert_eq!(t.lock(1, 0, 1, AlkW, true), Outcome::Granted);
        assert_eq!(t.lock(2, 0, 1, AlkW, true), Outcome::Waiting);
        assert!(t.downgrade(1, 0, 1, SalW));
        assert!(
            t.is_granted(2, 0, 1, AlkW),
            "the other BASE transaction's alkaline write goes"
        );
        assert_eq!(
            t.lock(3, 0, 1, AcidR, false),
            Outcome::Conflict,
            "ACID still isolated"
        );
        for o in [1, 2] {
            t.unlock(o, 0, 1);
        }
    }
}
