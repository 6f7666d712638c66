//! The hierarchical lock manager of Fig. 14: a traditional hash table of lock-request queues, locking
//! a range as VLLR does — its longest shared prefix in S or X, after intention locks (IS or IX) on
//! every shorter nonempty prefix — with the classic multi-granularity modes:
//!
//! ```text
//!         IS   IX   S    X
//!    IS   ok   ok   ok   -
//!    IX   ok   ok   -    -
//!    S    ok   -    ok   -
//!    X    -    -    -    -
//! ```
//!
//! Each lock looks its prefix up in the table (creating the queue on first use), appends a request,
//! and is granted when compatible with every request ahead of it (FIFO); releasing removes the
//! request, grants what became grantable and frees an emptied queue. So it finds exactly VLLR's
//! conflicts (Fig. 5 is this matrix on counters), paying a lock manager's price per prefix: the
//! paper found that price "so severe that it remains the sole throughput bottleneck".

use super::{longest_shared_prefix, KeyRange, Mode, RangeLockManager, TxnId};
use crate::protocols::kit::lock_manager::KeyHasher;
use crate::protocols::kit::prefix::Prefix;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// The four lock modes of hierarchical locking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HMode {
    IntentShared,
    IntentExclusive,
    Shared,
    Exclusive,
}

/// The compatibility matrix above.
pub fn compatible(a: HMode, b: HMode) -> bool {
    use HMode::*;
    match (a, b) {
        (Exclusive, _) | (_, Exclusive) => false,
        (IntentShared, _) | (_, IntentShared) => true,
        (IntentExclusive, IntentExclusive) | (Shared, Shared) => true,
        (IntentExclusive, Shared) | (Shared, IntentExclusive) => false,
    }
}

#[derive(Clone, Copy, Debug)]
struct Request {
    txn: TxnId,
    mode: HMode,
    granted: bool,
}

#[derive(Clone, Copy, Debug, Default)]
struct Txn {
    /// The prefix it locked and in which mode (`None`: holds nothing).
    lock: Option<(Prefix, Mode)>,
    /// Requests not granted yet.
    waiting: usize,
}

/// See the module docs.
pub struct HierarchicalLocks {
    key_bits: u8,
    table: HashMap<u64, Vec<Request>, BuildHasherDefault<KeyHasher>>,
    txns: Vec<Txn>,
}

/// The table's key for a prefix: its bits above its length (`key_bits` ≤ 56).
fn key(p: Prefix) -> u64 {
    p.bits << 8 | p.len as u64
}

impl HierarchicalLocks {
    /// A manager for `key_bits`-bit keys (1 to 56).
    pub fn new(key_bits: u8) -> Self {
        assert!((1..=56).contains(&key_bits), "key bits in 1..=56");
        HierarchicalLocks {
            key_bits,
            table: HashMap::default(),
            txns: Vec::new(),
        }
    }

    /// The locks a transaction on prefix `p` in `mode` takes: intentions on every shorter nonempty
    /// prefix, then `p` itself (the empty prefix, a whole-space range, is locked alone).
    fn locks(p: Prefix, mode: Mode) -> impl Iterator<Item = (Prefix, HMode)> {
        let (on, intent) = match mode {
            Mode::Exclusive => (HMode::Exclusive, HMode::IntentExclusive),
            Mode::Shared => (HMode::Shared, HMode::IntentShared),
        };
        (1..p.len)
            .map(move |len| (p.ancestor(len), intent))
            .chain(std::iter::once((p, on)))
    }
}

impl RangeLockManager for HierarchicalLocks {
    fn name(&self) -> &'static str {
        "hierarchical"
    }

    fn acquire(&mut self, txn: TxnId, range: KeyRange, mode: Mode) -> bool {
        let p = longest_shared_prefix(range, self.key_bits);
        let mut waiting = 0;
        for (q, m) in Self::locks(p, mode) {
            let queue = self.table.entry(key(q)).or_default();
            let granted = queue.iter().all(|r| compatible(r.mode, m));
            waiting += !granted as usize;
            queue.push(Request {
                txn,
                mode: m,
                granted,
            });
        }
        if txn >= self.txns.len() {
            self.txns.resize(txn + 1, Txn::default());
        }
        self.txns[txn] = Txn {
            lock: Some((p, mode)),
            waiting,
        };
        waiting == 0
    }

    fn release(&mut self, txn: TxnId, ready: &mut Vec<TxnId>) {
        let (p, mode) = self.txns[txn]
            .lock
            .take()
            .expect("releasing a transaction that holds nothing");
        debug_assert_eq!(self.txns[txn].waiting, 0, "released before it ran");
        for (q, _) in Self::locks(p, mode) {
            let k = key(q);
            let queue = self.table.get_mut(&k).expect("a locked prefix has a queue");
            let i = queue
                .iter()
                .position(|r| r.txn == txn)
                .expect("the transaction's request is in the queue");
            queue.remove(i);
            if queue.is_empty() {
                self.table.remove(&k);
                continue;
            }
            // FIFO: each request is granted when compatible with every one ahead of it.
            for j in 0..queue.len() {
                if queue[j].granted {
                    continue;
                }
                let (ahead, rest) = queue.split_at_mut(j);
                let r = &mut rest[0];
                if ahead.iter().all(|a| compatible(a.mode, r.mode)) {
                    r.granted = true;
                    let t = &mut self.txns[r.txn];
                    t.waiting -= 1;
                    if t.waiting == 0 {
                        ready.push(r.txn);
                    }
                }
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}
