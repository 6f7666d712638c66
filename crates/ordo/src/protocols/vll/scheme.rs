//! What a transaction locks, and how: the part of VLL that differs between point locks (`vll`,
//! `vll-sca`, `vll-arrayed`) and prefix range locks (`vllr`).
//!
//! A [`LockScheme`] turns a transaction's declared [`Access`]es into lock requests *before* the
//! critical section ([`LockScheme::plan`]: resolve keys to record slots, normalize), requests and releases
//! them *inside* it ([`LockScheme::request`] / [`LockScheme::release`], on state the partition's
//! critical section guards), and answers, while the transaction runs, whether an operation is covered
//! by what it locked ([`LockScheme::allows`]) — touching anything else is the dependent-transaction abort
//! of §2.4.
//!
//! [`PointLocks`] is the paper's VLL: one C_X/C_S pair per record. A range access is locked key by key
//! (every key value in the range, present or not, so an insert into it must conflict); a range wider
//! than [`POINT_RANGE_LIMIT`] keys cannot be, and the transaction runs **alone** instead (enqueued as a
//! barrier: it waits to be the queue head and every later transaction waits for it).
//!
//! Reads of a table that is read-only once loaded take no lock in either scheme
//! ([`Access::unlocked_in`]); execution lets them through without one.

use crate::protocols::kit::counters::{self, Colocated, CounterStore, VllCounters};
use crate::protocols::kit::lock_request::{self, LockRequest, Mode};
use crate::protocols::kit::prefix::Kind;
use crate::protocols::kit::sca::point_key;
use crate::storage::{Database, RowId, TableId};
use crate::txn::{Access, AccessKind, Target, TxResult};
use std::marker::PhantomData;

/// Widest range [`PointLocks`] locks key by key.
pub const POINT_RANGE_LIMIT: u64 = 1024;

/// The mode an access needs: shared for reads and scans, exclusive for anything that writes
/// (a read-modify-write counts once, as a write).
pub fn mode_of(a: &Access) -> Mode {
    match a.kind {
        AccessKind::Read | AccessKind::Scan => Mode::Shared,
        AccessKind::Update | AccessKind::Insert | AccessKind::Delete => Mode::Exclusive,
    }
}

/// How a family of VLL protocols locks.
pub trait LockScheme: Send + Sync + 'static {
    /// State beside each record.
    type Meta: Default + Send + Sync + 'static;
    /// Lock state inside the partition's critical section.
    type State: Default + Send + 'static;
    /// One lock request.
    type Request: Copy + Send + Sync + std::fmt::Debug + 'static;

    /// Whether [`Self::plan`] can prefetch the records of the accesses it plans: the worker then
    /// draws with [`crate::txn::RequestSource::next_resolving`], so that the harness does not declare
    /// the accesses once more to prefetch them first.
    const PREFETCHES: bool = false;

    /// Fills `out` with the normalized requests for `accesses` (no duplicates, a transaction never
    /// conflicts with itself). Returns `false` when they cannot be expressed and the transaction must
    /// run alone. With `prefetch` (only ever set when [`Self::PREFETCHES`]), also starts loading the
    /// records of `accesses`, as the harness would have ([`crate::txn::prefetch_accesses`]).
    fn plan(
        db: &Database<Self::Meta>,
        accesses: &[Access],
        out: &mut Vec<Self::Request>,
        prefetch: bool,
    ) -> TxResult<bool>;

    /// Requests `r` (increments) and says whether it was granted at once.
    fn request(st: &mut Self::State, db: &Database<Self::Meta>, r: &Self::Request) -> bool;

    /// Releases `r` (decrements).
    fn release(st: &mut Self::State, db: &Database<Self::Meta>, r: &Self::Request);

    /// Whether `locks` cover an access to `key` (a write needs an exclusive lock): `None` if not,
    /// else the covering request's position in `locks` (where the fast path goes on from) and the
    /// record's slot when the lock knows it (saves an index probe).
    fn allows(
        locks: &[Self::Request],
        table: TableId,
        key: u64,
        write: bool,
    ) -> Option<(usize, Option<RowId>)>;

    /// Whether the one request `r` covers an access to `key` (as [`Self::allows`]): a fast path tried
    /// before the search. `None` means "not this one" (or no fast path: the default).
    #[inline]
    fn covers(
        _r: &Self::Request,
        _table: TableId,
        _key: u64,
        _write: bool,
    ) -> Option<Option<RowId>> {
        None
    }

    /// Whether request `r` covers one key only, so that the fast path moves on to the next request
    /// once `r` has covered an access (the default: a point lock); `false` for a range's prefix,
    /// which covers the keys a scan or range update touches next as well.
    #[inline]
    fn covers_one(_r: &Self::Request) -> bool {
        true
    }

    /// Whether `locks` cover every key in `lo..=hi`, present or not, for reading.
    fn allows_range(locks: &[Self::Request], table: TableId, lo: u64, hi: u64) -> bool;

    /// The lock ids SCA hashes for `r`, each with the counter it marks.
    fn sca_keys(r: &Self::Request, f: &mut dyn FnMut(u64, Kind));
}

/// VLL's point locks: a C_X/C_S pair per record, kept by counter store `C` (colocated or arrayed).
pub struct PointLocks<C>(PhantomData<C>);

/// The per-record state of each counter layout.
pub trait PointLayout: CounterStore<Self::Meta> + Default {
    type Meta: Default + Send + Sync + 'static;
    /// The request for record `rid` of `t`, with whatever lets the layout find its counters fast;
    /// with `prefetch`, also starts loading the record's first line (its version word, and the
    /// colocated counters beside it).
    fn request_for(
        t: &crate::storage::Table<Self::Meta>,
        table: TableId,
        key: u64,
        rid: RowId,
        mode: Mode,
        prefetch: bool,
    ) -> LockRequest;
}
impl PointLayout for Colocated {
    type Meta = VllCounters;
    #[inline]
    fn request_for(
        t: &crate::storage::Table<VllCounters>,
        table: TableId,
        key: u64,
        rid: RowId,
        mode: Mode,
        prefetch: bool,
    ) -> LockRequest {
        let c = t.meta(rid);
        if prefetch {
            crate::storage::prefetch(c);
        }
        // SAFETY: `t` is table `table` of the database the partition requests this in (planning
        // and the critical section both use the protocol's database, which outlives them).
        unsafe { LockRequest::new(table, key, rid, mode).with_meta(c) }
    }
}
impl PointLayout for counters::Arrayed {
    type Meta = ();
    #[inline]
    fn request_for(
        t: &crate::storage::Table<()>,
        table: TableId,
        key: u64,
        rid: RowId,
        mode: Mode,
        prefetch: bool,
    ) -> LockRequest {
        if prefetch {
            crate::storage::prefetch(t.version(rid));
        }
        LockRequest::new(table, key, rid, mode)
    }
}

/// Adds the request for (`table`, `key`) in `mode` to `out` (see [`PointLocks`]'s `plan`): while the
/// list is short, a key already there is merged (a write wins over a read) instead of pushed, and
/// `sig`, a 64-bit signature of the keys kept so far, spares the search for keys certainly new.
/// With `prefetch`, the record's line starts loading as soon as the probe has found its slot.
#[inline(always)]
fn push_point<C: PointLayout>(
    t: &crate::storage::Table<C::Meta>,
    table: TableId,
    key: u64,
    mode: Mode,
    prefetch: bool,
    sig: &mut u64,
    out: &mut Vec<LockRequest>,
) {
    if out.len() <= lock_request::SMALL {
        let bit = lock_request::signature_bit(table, key);
        if *sig & bit != 0 {
            if let Some(l) = out.iter_mut().find(|l| l.key == key && l.table == table) {
                l.mode = l.mode.max(mode);
                return;
            }
        }
        *sig |= bit;
    }
    // The index probe happens here once; the slot rides in the request into execution.
    let rid = match t.lookup(key) {
        Some(rid) => rid,
        None => t.get_or_create(key).0,
    };
    out.push(C::request_for(t, table, key, rid, mode, prefetch));
}

impl<C: PointLayout + Sync> LockScheme for PointLocks<C> {
    type Meta = C::Meta;
    type State = C;
    type Request = LockRequest;

    const PREFETCHES: bool = true;

    fn plan(
        db: &Database<C::Meta>,
        accesses: &[Access],
        out: &mut Vec<LockRequest>,
        prefetch: bool,
    ) -> TxResult<bool> {
        out.clear();
        // The harness prefetches in two tight rounds, every key's index entry and then, probing
        // again, every key's record. Planning probes every key anyway (the slot rides in the
        // request into execution), so only the first round runs here: the loop below starts each
        // record's line loading as its probe finds the slot, one probe per key instead of two
        // (8,459 -> 8,000 instructions a `vll-micro` transaction; the records' requests go out one
        // key's planning apart, which cost YCSB about a point: docs/results/vll.md, twentieth pass).
        if prefetch {
            crate::txn::prefetch_index_entries(accesses, db);
        }
        // Normalization happens on the way in while the list is short (first-request order, each key
        // once, a write wins over a read; a 64-bit signature spares the search for keys certainly
        // new); a long list is sorted and deduplicated at the end by `normalize`.
        let mut sig = 0u64;
        for a in accesses {
            if a.unlocked_in(db)? {
                // Read without a lock, but read all the same: its record is loaded like the others.
                if let (true, Target::Key(k)) = (prefetch, a.target) {
                    db.table(a.table).prefetch_row(k);
                }
                continue;
            }
            let t = db.table(a.table);
            let mode = mode_of(a);
            match a.target {
                Target::Key(k) => push_point::<C>(t, a.table, k, mode, prefetch, &mut sig, out),
                Target::Range { lo, hi } if hi < lo => {}
                Target::Range { lo, hi } if hi - lo >= POINT_RANGE_LIMIT => return Ok(false),
                Target::Range { lo, hi } => {
                    for key in lo..=hi {
                        push_point::<C>(t, a.table, key, mode, false, &mut sig, out);
                    }
                }
            }
        }
        if out.len() > lock_request::SMALL {
            lock_request::normalize(out);
        }
        // The counters' cache lines are not loaded here: they were prefetched (above or by the
        // harness), and a blocking load now would make the worker wait for every one of them before
        // the latch and the queue work, which otherwise overlap the misses still in flight.
        Ok(true)
    }

    #[inline]
    fn request(st: &mut C, db: &Database<C::Meta>, r: &LockRequest) -> bool {
        st.request(db, r)
    }
    #[inline]
    fn release(st: &mut C, db: &Database<C::Meta>, r: &LockRequest) {
        st.release(db, r)
    }
    #[inline]
    fn allows(
        locks: &[LockRequest],
        table: TableId,
        key: u64,
        write: bool,
    ) -> Option<(usize, Option<RowId>)> {
        lock_request::find(locks, table, key)
            .filter(|&i| !write || locks[i].mode == Mode::Exclusive)
            .map(|i| (i, Some(locks[i].rid)))
    }
    #[inline]
    fn covers(r: &LockRequest, table: TableId, key: u64, write: bool) -> Option<Option<RowId>> {
        (r.key == key && r.table == table && (!write || r.mode == Mode::Exclusive))
            .then_some(Some(r.rid))
    }
    fn allows_range(locks: &[LockRequest], table: TableId, lo: u64, hi: u64) -> bool {
        if hi < lo {
            return true;
        }
        // Normalized locks are unique: the range is covered iff all hi - lo + 1 keys are there.
        lock_request::count_in(locks, table, lo, hi) as u64 == hi - lo + 1
    }
    #[inline]
    fn sca_keys(r: &LockRequest, f: &mut dyn FnMut(u64, Kind)) {
        let (id, kind) = point_key(r);
        f(id, kind)
    }
}
