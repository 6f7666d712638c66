//! The predicate lock manager (§3.1–3.2): Algorithm 1 over the buckets of column filtering, the
//! conflict rule of the configured optimizations, waits with a timeout plus jitter, and release after
//! commit.
//!
//! ```text
//! acquire(tx, L):  L' ← compile(L)              (DNF / conjuncts, outside any critical section)
//!                  for b in f(L): S'_b ← FetchInsert(b, L')     (snapshot + insert, b's mutex)
//!                  for L'' in ∪ S'_b, L'' of another transaction:
//!                      if conflict(L', L''): wait until L'' is released, or time out
//! ```
//! A newcomer waits only for locks that were present when it arrived; later arrivals find it in the
//! set and wait for it. Two transactions that wait for each other both time out (the timeout has
//! random jitter, so one usually gives up first); the one that gets [`Error::Timeout`] rolls back,
//! calls [`LockManager::release`] and restarts. A transaction's locks are released together by
//! `release`, which the caller calls only after the engine's commit (or rollback) returned: strict
//! 2PL.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::buckets::{bucket_of, key_bounds, key_values, Bucket};
use crate::conflict_graph::ConflictGraph;
use crate::dnf::Solver;
use crate::error::Error;
use crate::isolation::Isolation;
use crate::lock::{ColumnSet, ConflictRule, Lock, RelationId, StatementKind};
use crate::optimizations::Optimizations;
use crate::predicate::{ColumnId, Predicate, Value};
use crate::prepared::{Template, TemplateId};

/// A relation as the lock manager sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelationSpec {
    pub name: String,
    /// Columns `0..width` (1 to 64).
    pub width: u16,
    /// The filter column of §2.2.3 (the primary key): locks are filed by an equality on it, and a
    /// read lock is an *equality* lock (§5.2) when its predicate pins it. `None`: one bucket, and
    /// every read lock is a range lock.
    pub key: Option<ColumnId>,
    /// N, the buckets of this relation when filtering (the public artifact uses 1024).
    pub buckets: u32,
}

impl RelationSpec {
    pub fn new(name: &str, width: u16, key: Option<ColumnId>, buckets: u32) -> Self {
        RelationSpec {
            name: name.to_string(),
            width,
            key,
            buckets,
        }
    }
}

/// Waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// How long one acquisition waits in all before it gives up with [`Error::Timeout`]…
    pub timeout: Duration,
    /// …plus a random extra in `[0, jitter)`, so that of two deadlocked transactions one usually
    /// gives up well before the other.
    pub jitter: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            timeout: Duration::from_millis(10),
            jitter: Duration::from_millis(10),
        }
    }
}

/// Who waits: a hook the manager calls while an acquisition waits for a conflicting lock, so a
/// caller can report the wait (an interactive session's observer), look for a deadlock of its own
/// (§3.1 leaves the method open: "deadlock avoidance or detection"), or give up. `()` is the plain
/// waiter: one condition-variable wait until the lock is released or the timeout passes.
pub trait Waiter {
    /// The timeout and jitter of this acquisition's waits; the manager's [`Config`] when `None` (an
    /// interactive session may wait longer than a benchmark's transactions).
    fn config(&self) -> Option<Config> {
        None
    }

    /// How long one slice of a wait lasts before [`Waiter::round`] is called again; `None` waits
    /// until the release or the deadline in one go (and calls `round` once per conflicting lock).
    fn slice(&self) -> Option<Duration> {
        None
    }

    /// Called before each slice of a wait for a lock of transaction `holder` (a [`Txn::id`]);
    /// `false` gives up now: the acquisition returns [`Error::Timeout`] as if the timeout had passed.
    fn round(&mut self, holder: u64) -> bool {
        let _ = holder;
        true
    }
}

impl Waiter for () {}

/// An ad hoc lock request: the relation, what kind of statement, its predicate and the columns it
/// reads and writes (the predicate's own columns are added to `read`; inserts and deletes write every
/// column).
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub relation: RelationId,
    pub kind: StatementKind,
    pub predicate: &'a Predicate,
    pub read: ColumnSet,
    pub write: ColumnSet,
}

/// Which buckets a lock is in.
#[derive(Debug, Clone)]
enum Place {
    /// Nowhere: a predicate that pins the key to no value (`FALSE`).
    Nowhere,
    /// The one set of the naive manager.
    Global,
    One(RelationId, u32),
    Many(RelationId, Box<[u32]>),
    All(RelationId, u32),
}

struct Held {
    lock: Arc<Lock>,
    place: Place,
    statement: bool,
    /// An ad hoc lock's predicate, to know a repeat of its request.
    predicate: Option<Predicate>,
}

/// A transaction's context (§3.2): its locks and where they are. Owned by the worker running the
/// transaction; reuse it across restarts.
pub struct Txn {
    id: u64,
    isolation: Isolation,
    held: Vec<Held>,
    snapshot: Vec<(Arc<Lock>, u32)>,
    solver: Box<Solver>,
    rng: u64,
    waits: u64,
}

impl Txn {
    pub fn id(&self) -> u64 {
        self.id
    }

    pub fn isolation(&self) -> Isolation {
        self.isolation
    }

    /// Change the level for the next acquisitions (`BEGIN ISOLATION LEVEL …` after `begin`).
    pub fn set_isolation(&mut self, isolation: Isolation) {
        self.isolation = isolation;
    }

    /// Locks held now (including one whose wait timed out, until `release`).
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// Conflicting locks this transaction waited for, so far.
    pub fn waits(&self) -> u64 {
        self.waits
    }

    fn jitter(&mut self, max: Duration) -> Duration {
        // xorshift64*
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let r = self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D);
        let nanos = max.as_nanos() as u64;
        if nanos == 0 {
            Duration::ZERO
        } else {
            Duration::from_nanos(r % nanos)
        }
    }
}

/// The predicate lock manager. Share it (`&` or `Arc`) among the workers.
pub struct LockManager {
    rule: ConflictRule,
    relations: Vec<RelationSpec>,
    global: Bucket,
    tables: Vec<Box<[Bucket]>>,
    /// Per template: the key values its predicate pins, as template values.
    template_keys: Vec<Option<Vec<Value>>>,
    /// Per template: the bounds its predicate keeps the key within, as template values.
    template_bounds: Vec<Option<(Value, Value)>>,
    config: Config,
    next_txn: AtomicU64,
}

impl LockManager {
    /// A manager over `relations` with the request templates known in advance (§3.2's
    /// initialization: the conflict graph is built here when `opts.prepared`).
    pub fn new(
        relations: Vec<RelationSpec>,
        templates: Vec<Template>,
        opts: Optimizations,
        config: Config,
    ) -> Result<Self, Error> {
        for (i, r) in relations.iter().enumerate() {
            let bad = |m: &str| {
                Err(Error::BadRelation {
                    relation: i as u32,
                    message: m.to_string(),
                })
            };
            if r.width == 0 || r.width > 64 {
                return bad("width must be 1 to 64 columns");
            }
            if r.buckets == 0 {
                return bad("at least one bucket");
            }
            if r.key.is_some_and(|k| k >= r.width) {
                return bad("key column past the width");
            }
        }
        let mut checked = Vec::with_capacity(templates.len());
        for t in templates {
            let r = relations
                .get(t.relation as usize)
                .ok_or(Error::UnknownRelation(t.relation))?;
            t.predicate.validate(r.width)?;
            let (read, write) = columns(r, t.kind, t.read, t.write, t.predicate.columns())?;
            checked.push(Template { read, write, ..t });
        }
        let template_keys = checked
            .iter()
            .map(|t| {
                relations[t.relation as usize]
                    .key
                    .and_then(|k| key_values(&t.predicate, k))
            })
            .collect();
        let template_bounds = checked
            .iter()
            .map(|t| {
                relations[t.relation as usize]
                    .key
                    .and_then(|k| key_bounds(&t.predicate, k))
            })
            .collect();
        let graph = if opts.prepared {
            ConflictGraph::build(checked, opts.column_level, opts.threshold)
        } else {
            // Without the optimization the templates are only bound and handled ad hoc.
            ConflictGraph::templates_only(checked)
        };
        let tables = relations
            .iter()
            .map(|r| {
                let n = if opts.filter && r.key.is_some() {
                    r.buckets
                } else {
                    1
                };
                (0..n).map(|_| Bucket::default()).collect()
            })
            .collect();
        Ok(LockManager {
            rule: ConflictRule::new(opts, graph),
            relations,
            global: Bucket::default(),
            tables,
            template_keys,
            template_bounds,
            config,
            next_txn: AtomicU64::new(1),
        })
    }

    pub fn optimizations(&self) -> Optimizations {
        self.rule.opts
    }

    pub fn rule(&self) -> &ConflictRule {
        &self.rule
    }

    /// A new transaction context. A worker may keep one for all its transactions, one after another:
    /// once [`LockManager::release`] returned it holds nothing, and its id only tells its locks from
    /// other contexts' (no fresh id, no shared counter, per transaction).
    pub fn begin(&self, isolation: Isolation) -> Txn {
        let id = self.next_txn.fetch_add(1, Ordering::Relaxed);
        let rng = RandomState::new().hash_one(id) | 1;
        Txn {
            id,
            isolation,
            held: Vec::new(),
            snapshot: Vec::new(),
            solver: Box::default(),
            rng,
            waits: 0,
        }
    }

    /// Acquire the lock of an ad hoc request, waiting for earlier conflicting locks. On
    /// [`Error::Timeout`] the lock stays held until [`LockManager::release`], which the caller
    /// must call before it restarts. Other errors take no lock.
    pub fn acquire(&self, tx: &mut Txn, req: Request<'_>) -> Result<(), Error> {
        self.acquire_with(tx, req, &mut ())
    }

    /// [`LockManager::acquire`] with a [`Waiter`].
    pub fn acquire_with(
        &self,
        tx: &mut Txn,
        req: Request<'_>,
        waiter: &mut impl Waiter,
    ) -> Result<(), Error> {
        let rel = self
            .relations
            .get(req.relation as usize)
            .ok_or(Error::UnknownRelation(req.relation))?;
        req.predicate.validate(rel.width)?;
        let (read, write) = columns(rel, req.kind, req.read, req.write, req.predicate.columns())?;
        if req.kind == StatementKind::Select && !tx.isolation.locks_reads() {
            return Ok(());
        }
        // A repeat of a request the transaction holds a lock for (the same predicate, kind and
        // columns, or a read under a write lock of the same predicate) takes no second lock: as
        // for prepared requests below, a second lock would wait for the conflicting locks that
        // arrived since the first, which wait for the first.
        if tx.held.iter().any(|h| {
            !h.statement
                && h.lock.relation == req.relation
                && (h.lock.kind == req.kind || req.kind == StatementKind::Select)
                && read.0 & !h.lock.read.0 == 0
                && write.0 & !h.lock.write.0 == 0
                && h.predicate.as_ref() == Some(req.predicate)
        }) {
            return Ok(());
        }
        let keys = rel.key.and_then(|k| key_values(req.predicate, k));
        let bounds = match keys {
            None => rel.key.and_then(|k| key_bounds(req.predicate, k)),
            Some(_) => None,
        };
        let form = self.rule.compile(req.predicate, &mut tx.solver);
        let lock = Lock::ad_hoc(tx.id, req.relation, req.kind, form, read, write);
        let predicate = Some(req.predicate.clone());
        self.insert_and_wait(tx, lock, predicate, keys.as_deref(), bounds, waiter)
    }

    /// Acquire the lock of prepared request `template` with `params` (§3.2's prepared path; handled
    /// ad hoc when the prepared optimization is off).
    pub fn acquire_prepared(
        &self,
        tx: &mut Txn,
        template: TemplateId,
        params: &[i64],
    ) -> Result<(), Error> {
        self.acquire_prepared_with(tx, template, params, None, &mut ())
    }

    /// [`LockManager::acquire_prepared`] with the columns this request really reads and writes
    /// (`columns`: `(read, write)`, each within the template's; the template's when `None`) and a
    /// [`Waiter`]. A template may declare wide column sets (every column of its relation) once, and
    /// each request narrow them: the conflict graph's edges were derived with the wide sets, so an
    /// edge it dropped stays droppable, and the column rule (§2.2.4) is applied again to the narrow
    /// sets at run time. Inserts and deletes keep writing every column. A set wider than the
    /// template's is refused ([`Error::ColumnOutOfRange`] names a column outside it).
    pub fn acquire_prepared_with(
        &self,
        tx: &mut Txn,
        template: TemplateId,
        params: &[i64],
        columns: Option<(ColumnSet, ColumnSet)>,
        waiter: &mut impl Waiter,
    ) -> Result<(), Error> {
        let t = self
            .rule
            .graph
            .template(template)
            .ok_or(Error::UnknownTemplate(template))?;
        let arity = t.predicate.arity();
        if params.len() != arity {
            return Err(Error::Arity {
                template,
                expected: arity,
                given: params.len(),
            });
        }
        if t.kind == StatementKind::Select && !tx.isolation.locks_reads() {
            return Ok(());
        }
        let (read, write) = match columns {
            None => (t.read, t.write),
            Some((read, write)) => {
                let read = read.union(ColumnSet(t.predicate.columns()));
                let write = if t.kind.is_insert_or_delete() {
                    t.write
                } else {
                    write
                };
                for (set, within) in [(read, t.read), (write, t.write)] {
                    let outside = set.0 & !within.0;
                    if outside != 0 {
                        return Err(Error::ColumnOutOfRange {
                            column: outside.trailing_zeros() as ColumnId,
                            width: self.relations[t.relation as usize].width,
                        });
                    }
                }
                (read, write)
            }
        };
        // A repeat of a request the transaction holds a lock for takes no second lock. Not only
        // cheaper: a second lock would wait for every conflicting lock that arrived since the first
        // (Algorithm 1 waits for locks still waiting too), and those wait for the first — a
        // deadlock with itself. A lock of read committed's statement scope does not count.
        if tx
            .held
            .iter()
            .any(|h| !h.statement && h.lock.covers(template, params, read, write))
        {
            return Ok(());
        }
        let value = |v: Value| match v {
            Value::Const(c) => c,
            Value::Param(i) => params[usize::from(i)],
        };
        // One pinned key (the common case) needs no allocation.
        let mut one = [0i64; 1];
        let many: Vec<i64>;
        let keys: Option<&[i64]> = match self.template_keys[template as usize].as_deref() {
            None => None,
            Some([v]) => {
                one[0] = value(*v);
                Some(&one)
            }
            Some(vs) => {
                many = vs.iter().map(|v| value(*v)).collect();
                Some(&many)
            }
        };
        let bounds = match keys {
            None => self.template_bounds[template as usize].map(|(a, b)| (value(a), value(b))),
            Some(_) => None,
        };
        let lock = if self.rule.opts.prepared {
            Lock::prepared(tx.id, template, params, t.relation, t.kind, read, write)
        } else {
            let p = t.predicate.bind(params).ok_or(Error::Arity {
                template,
                expected: arity,
                given: params.len(),
            })?;
            let form = self.rule.compile(&p, &mut tx.solver);
            Lock::bound(
                tx.id, template, params, t.relation, t.kind, form, read, write,
            )
        };
        self.insert_and_wait(tx, lock, None, keys, bounds, waiter)
    }

    fn insert_and_wait(
        &self,
        tx: &mut Txn,
        mut lock: Lock,
        predicate: Option<Predicate>,
        keys: Option<&[i64]>,
        bounds: Option<(i64, i64)>,
        waiter: &mut impl Waiter,
    ) -> Result<(), Error> {
        let relation = lock.relation;
        let is_point = keys.is_some_and(|k| !k.is_empty());
        lock.passable =
            lock.kind == StatementKind::Select && tx.isolation.range_reads_passable() && !is_point;
        let statement =
            lock.kind == StatementKind::Select && tx.isolation.releases_reads_at_statement_end();
        let place = self.place(relation, keys, bounds);
        let lock = Arc::new(lock);
        let mut snapshot = std::mem::take(&mut tx.snapshot);
        snapshot.clear();
        let multi =
            self.for_each_bucket(&place, |i, b| b.fetch_insert(&lock, i, &mut snapshot)) > 1;
        tx.held.push(Held {
            lock: Arc::clone(&lock),
            place: place.clone(),
            statement,
            predicate,
        });
        if multi {
            snapshot.sort_unstable_by_key(|(l, _)| Arc::as_ptr(l));
            snapshot.dedup_by(|a, b| Arc::ptr_eq(&a.0, &b.0));
        }
        let mut deadline = None;
        let mut result = Ok(());
        for (old, index) in &snapshot {
            if old.released.load(Ordering::Acquire)
                || !self.rule.conflict(&lock, old, &mut tx.solver)
            {
                continue;
            }
            tx.waits += 1;
            let until = match deadline {
                Some(d) => d,
                None => {
                    let c = waiter.config().unwrap_or(self.config);
                    let d = Instant::now() + c.timeout + tx.jitter(c.jitter);
                    deadline = Some(d);
                    d
                }
            };
            let bucket = self.bucket(&place, *index);
            let released = loop {
                if !waiter.round(old.txn) {
                    break false;
                }
                let end = match waiter.slice() {
                    Some(s) => until.min(Instant::now() + s),
                    None => until,
                };
                if bucket.wait_released(old, end) {
                    break true;
                }
                if end >= until {
                    break false;
                }
            };
            if !released {
                result = Err(Error::Timeout);
                break;
            }
        }
        snapshot.clear();
        tx.snapshot = snapshot;
        result
    }

    /// Release the locks of `SELECT`s taken under read committed (call at each statement's end; a
    /// no-op at other levels).
    pub fn end_statement(&self, tx: &mut Txn) {
        let mut i = 0;
        while i < tx.held.len() {
            if tx.held[i].statement {
                let h = tx.held.swap_remove(i);
                self.release_one(&h);
            } else {
                i += 1;
            }
        }
    }

    /// Release every lock of `tx` — after the engine's commit or rollback returned (strict 2PL).
    pub fn release(&self, tx: &mut Txn) {
        for h in tx.held.drain(..) {
            self.release_one(&h);
        }
    }

    fn release_one(&self, h: &Held) {
        h.lock.released.store(true, Ordering::Release);
        self.for_each_bucket(&h.place, |_, b| b.remove(&h.lock));
    }

    /// N, the buckets of `relation` when the manager filters (§2.2.3); `None` without filtering
    /// or for an unknown relation.
    pub fn buckets(&self, relation: RelationId) -> Option<u32> {
        match self.rule.opts.filter {
            true => self.tables.get(relation as usize).map(|t| t.len() as u32),
            false => None,
        }
    }

    /// Locks in the active sets now (a lock in k buckets counts k times).
    pub fn active(&self) -> usize {
        self.global.len()
            + self
                .tables
                .iter()
                .flat_map(|t| t.iter())
                .map(Bucket::len)
                .sum::<usize>()
    }

    /// Where a lock goes: by the key values its predicate pins (`keys`), else by the bounds it
    /// keeps the key within when they span fewer values than there are buckets (and at most
    /// [`crate::buckets::MAX_KEY_VALUES`]), else everywhere.
    fn place(
        &self,
        relation: RelationId,
        keys: Option<&[i64]>,
        bounds: Option<(i64, i64)>,
    ) -> Place {
        if !self.rule.opts.filter {
            return Place::Global;
        }
        let n = self.tables[relation as usize].len() as u32;
        match keys {
            _ if n == 1 => Place::One(relation, 0),
            None => match bounds {
                Some((lo, hi)) if lo > hi => Place::Nowhere,
                Some((lo, hi))
                    if (i128::from(hi) - i128::from(lo))
                        < i128::from(n.min(crate::buckets::MAX_KEY_VALUES as u32)) =>
                {
                    let mut bs: Vec<u32> = (lo..=hi).map(|k| bucket_of(k, n)).collect();
                    bs.sort_unstable();
                    bs.dedup();
                    match bs[..] {
                        [b] => Place::One(relation, b),
                        _ => Place::Many(relation, bs.into()),
                    }
                }
                _ => Place::All(relation, n),
            },
            Some([]) => Place::Nowhere,
            Some([k]) => Place::One(relation, bucket_of(*k, n)),
            Some(ks) => {
                let mut bs: Vec<u32> = ks.iter().map(|&k| bucket_of(k, n)).collect();
                bs.sort_unstable();
                bs.dedup();
                if bs.len() as u32 == n {
                    Place::All(relation, n)
                } else {
                    Place::Many(relation, bs.into())
                }
            }
        }
    }

    fn bucket(&self, place: &Place, index: u32) -> &Bucket {
        match place {
            Place::Global | Place::Nowhere => &self.global,
            Place::One(r, _) | Place::Many(r, _) | Place::All(r, _) => {
                &self.tables[*r as usize][index as usize]
            }
        }
    }

    /// Visit the buckets of `place` in increasing order; returns how many.
    fn for_each_bucket(&self, place: &Place, mut f: impl FnMut(u32, &Bucket)) -> usize {
        match place {
            Place::Nowhere => 0,
            Place::Global => {
                f(0, &self.global);
                1
            }
            Place::One(r, b) => {
                f(*b, &self.tables[*r as usize][*b as usize]);
                1
            }
            Place::Many(r, bs) => {
                for &b in bs.iter() {
                    f(b, &self.tables[*r as usize][b as usize]);
                }
                bs.len()
            }
            Place::All(r, n) => {
                for (b, bucket) in self.tables[*r as usize].iter().enumerate() {
                    f(b as u32, bucket);
                }
                *n as usize
            }
        }
    }
}

/// The checked read and write sets of a request: within the relation, the predicate's columns read,
/// every column written by inserts and deletes.
fn columns(
    rel: &RelationSpec,
    kind: StatementKind,
    read: ColumnSet,
    write: ColumnSet,
    predicate: u64,
) -> Result<(ColumnSet, ColumnSet), Error> {
    let all = ColumnSet::all(rel.width);
    for set in [read, write] {
        if set.0 & !all.0 != 0 {
            let column = (63 - (set.0 & !all.0).leading_zeros()) as ColumnId;
            return Err(Error::ColumnOutOfRange {
                column,
                width: rel.width,
            });
        }
    }
    let write = if kind.is_insert_or_delete() {
        all
    } else {
        write
    };
    Ok((read.union(ColumnSet(predicate)), write))
}
