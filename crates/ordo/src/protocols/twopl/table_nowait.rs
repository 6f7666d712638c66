//! `2pl-table`: strict 2PL with no-wait deadlock prevention over the **traditional lock manager**
//! ([`crate::protocols::kit::lock_table`]: a latched hash table of lock heads with request queues) instead of a lock
//! word beside each record. Everything else — in-place writes with undo, the lock set, next-key
//! locking, phantom protection — is the shared 2PL transaction of [`super::txn`]; only where a lock
//! lives and what taking it costs differ from `2pl-nowait`.
//!
//! It exists as the VLL paper's baseline (Ren, Thomson, Abadi 2015, Fig. 8 and Fig. 16): "2PL" there is
//! a System R-style lock manager whose hashing, latching and request-queue work is what VLL removes.
//! Run it beside `2pl-nowait` and `vll` on `vll-micro` to see that overhead.
//!
//! A conflicting request is withdrawn at once (the transaction aborts with
//! [`AbortReason::LockConflict`]), so no request ever waits in a queue: no deadlock, same outcomes as
//! `2pl-nowait`. A record's lock is named by `(table, row slot)`; a key's slot never changes (the index
//! is insert-only), so that is the key's identity.

use super::lock::Mode;
use super::{Policy, Record};
use crate::protocols::kit::lock_table::{LockTable, Outcome, Owner};
use crate::protocols::{Interactive, Isolation, ProtocolConfig, ProtocolInfo};
use crate::txn::AbortReason;

/// No-wait over the lock table.
pub struct TableNoWait;

impl Policy for TableNoWait {
    /// Nothing beside the record: the lock lives in the table.
    type Lock = ();
    type Shared = LockTable;
    /// The worker id, the owner of this worker's requests.
    type Local = Owner;

    const INFO: ProtocolInfo = ProtocolInfo {
        name: "2pl-table",
        summary: "strict 2PL, no-wait, over a traditional lock manager: a latched hash table of lock \
                  heads and request queues (the VLL paper's baseline)",
        paper: "Gray & Reuter 1993 (lock manager); Ren, Thomson, Abadi, VLDB J. 2015 (VLL's 2PL baseline)",
        isolation: Isolation::Serializable,
        interactive: Interactive::Concurrent,
        knobs: super::KNOBS,
    };

    fn shared(_config: &ProtocolConfig) -> LockTable {
        LockTable::default()
    }
    fn local(_shared: &LockTable, worker: u32) -> Owner {
        worker
    }

    #[inline]
    fn acquire(
        table: &LockTable,
        owner: &mut Owner,
        _: &(),
        (t, rid): Record,
        mode: Mode,
    ) -> Result<(), AbortReason> {
        match table.lock(*owner, t, rid, mode, false) {
            Outcome::Granted => Ok(()),
            Outcome::Conflict | Outcome::Waiting => Err(AbortReason::LockConflict),
        }
    }

    #[inline]
    fn release(table: &LockTable, owner: &Owner, _: &(), (t, rid): Record, _: Mode) {
        table.unlock(*owner, t, rid);
    }
}
