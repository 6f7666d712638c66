//! `WAIT_DIE` (Rosenkrantz, Stearns, Lewis 1978): a requester that conflicts waits only if it is
//! **older** (smaller timestamp) than every conflicting holder; otherwise it **dies**
//! ([`AbortReason::Died`]). Waits-for edges therefore always run from older to younger transactions, so
//! no cycle — no deadlock — can form. A transaction that died keeps its timestamp when it retries (see
//! [`super::wait`]), so it ages until it is the oldest and can no longer die: no starvation.

use super::lock::{Mode, OwnerLock};
use super::wait::{acquire_waiting, Local, Registry};
use super::{Policy, Record};
use crate::protocols::{Interactive, Isolation, ProtocolConfig, ProtocolInfo};
use crate::txn::AbortReason;

/// The wait-die deadlock-prevention policy.
pub struct WaitDie;

/// Whether the transaction with timestamp `my_ts` may wait for every worker in `holders`.
#[inline]
fn older_than_all(reg: &Registry, my_ts: u64, mut holders: u64) -> bool {
    while holders != 0 {
        let w = holders.trailing_zeros() as usize;
        holders &= holders - 1;
        if reg.ts(w) <= my_ts {
            return false;
        }
    }
    true
}

impl Policy for WaitDie {
    type Lock = OwnerLock;
    type Shared = Registry;
    type Local = Local;

    const INFO: ProtocolInfo = ProtocolInfo {
        name: "2pl-waitdie",
        summary:
            "strict two-phase locking, S/X row locks and next-key locks; older waits, younger dies",
        paper: super::PAPER,
        isolation: Isolation::Serializable,
        interactive: Interactive::Concurrent,
        knobs: super::KNOBS,
    };
    /// Workers are bits of the waits-for graph's and the owner sets' 63-bit words.
    const MAX_WORKERS: usize = super::lock::MAX_OWNER_WORKERS as usize;

    fn shared(config: &ProtocolConfig) -> Registry {
        Registry::new(config.lock_wait_timeout)
    }
    fn local(shared: &Registry, worker: u32) -> Local {
        shared.local(worker)
    }
    #[inline]
    fn begin(shared: &Registry, local: &mut Local) {
        shared.begin(local);
    }
    #[inline]
    fn end(shared: &Registry, local: &mut Local, retry: bool) {
        shared.end(local, retry);
    }

    #[inline]
    fn acquire(
        reg: &Registry,
        l: &mut Local,
        lock: &OwnerLock,
        _: Record,
        mode: Mode,
    ) -> Result<(), AbortReason> {
        let my_ts = l.ts;
        acquire_waiting(
            lock,
            l.bit,
            mode,
            reg.timeout(),
            AbortReason::Died,
            |holders, _| {
                if older_than_all(reg, my_ts, holders) {
                    Ok(())
                } else {
                    Err(AbortReason::Died)
                }
            },
        )
    }

    #[inline]
    fn release(_: &Registry, l: &Local, lock: &OwnerLock, _: Record, mode: Mode) {
        lock.release(l.bit, mode);
    }
}
