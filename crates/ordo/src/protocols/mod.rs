//! Concurrency-control protocols, one folder per family, and the registry that names them.
//!
//! A protocol owns two things the storage core leaves open (the split DBx1000 uses):
//! * **per-record state** — [`Protocol::Meta`], stored beside every row in the arena (a lock word, a TID
//!   word, counters, a version-chain head), generic so each protocol pays only for its own;
//! * **per-transaction state** — its [`Protocol::Tx`], created by [`Protocol::begin`] from a per-thread
//!   [`Protocol::Worker`] that keeps reusable buffers, the id generator and the history recorder.
//!
//! Adding a protocol means writing its folder and adding one line to the `registry!` below.

use crate::options::{OptionError, OptionSpec, Settings};
use crate::storage::Database;
use crate::txn::{
    run_pieces, Backoff, Program, Recorder, RequestSource, RetryPolicy, Tx, TxResult,
};

pub mod callas;
/// Test support: the behaviour every protocol must show (used by each protocol's tests).
#[cfg(test)]
pub(crate) mod conformance;
pub mod deterministic;
pub mod dibs;
#[cfg(test)]
mod floor_plan;
pub mod ic3;
pub mod kit;
pub mod mvcc;
pub mod nocc;
pub mod partitioned;
pub mod pwv;
pub mod salt;
pub mod sc_chopping;
pub mod silo;
pub mod twopl;
pub mod vll;

/// The isolation a protocol promises (what the checker holds it to).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Isolation {
    /// No promise at all.
    None,
    ReadCommitted,
    SnapshotIsolation,
    Serializable,
}

/// How far a protocol runs interactive transactions ([`Protocol::begin`]: arbitrary code between
/// begin and commit, as the SQL front and the isolation spec runner issue them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Interactive {
    /// Any number at once: a transaction that waits for another's lock says so through
    /// [`crate::txn::wait`], so a driver stepping several sessions (`ordo spec`) sees the wait
    /// instead of hanging.
    Concurrent,
    /// One at a time: an interactive transaction runs (as a barrier holding what it may touch),
    /// but a second one begun while the first is open waits without saying so. `ordo sql`'s one
    /// session works; `ordo spec`, which overlaps sessions, refuses the protocol.
    OneAtATime,
    /// None: the protocol runs whole programs only (its own execution model needs them up front).
    No,
}

/// A protocol's name, origin, promise, and what it offers beyond running programs.
#[derive(Clone, Copy, Debug)]
pub struct ProtocolInfo {
    /// The name used on the command line (`2pl-nowait`).
    pub name: &'static str,
    /// One line on what it is.
    pub summary: &'static str,
    /// Where it comes from.
    pub paper: &'static str,
    pub isolation: Isolation,
    /// Whether the SQL front and the spec runner can drive it.
    pub interactive: Interactive,
    /// The knobs it reads from [`ProtocolConfig::knobs`] when it opens (declared beside the
    /// protocol; the command line, `ordo list` and the JSON results take them from here).
    pub knobs: &'static [&'static OptionSpec],
}

/// What a protocol is opened with: the same value from the command line (or an embedding program)
/// to [`Protocol::open`].
#[derive(Clone, Debug)]
pub struct ProtocolConfig {
    /// Number of worker threads that will run transactions.
    pub threads: usize,
    /// How long a protocol that waits for locks lets one wait last before the waiter gives up (see
    /// `twopl::wait`). Benchmarks keep the default; the isolation spec runner, which holds a lock across
    /// steps on purpose, raises it so that its outcomes never depend on timing.
    pub lock_wait_timeout: std::time::Duration,
    /// Knob values given (each protocol reads those of its [`ProtocolInfo::knobs`], their declared
    /// defaults standing in for the others, and ignores the rest).
    pub knobs: Settings,
}

impl Default for ProtocolConfig {
    fn default() -> Self {
        ProtocolConfig {
            threads: 1,
            lock_wait_timeout: std::time::Duration::from_millis(250),
            knobs: Settings::new(),
        }
    }
}

impl ProtocolConfig {
    /// The default configuration for `threads` workers.
    pub fn with_threads(threads: usize) -> Self {
        ProtocolConfig {
            threads,
            ..ProtocolConfig::default()
        }
    }

    /// The same configuration with knob `spec` set to `value` (as typed on the command line).
    pub fn with_knob(mut self, spec: &OptionSpec, value: &str) -> Result<Self, OptionError> {
        self.knobs.parse(spec, value)?;
        Ok(self)
    }
}

/// A concurrency-control protocol over the shared storage core.
pub trait Protocol: Sized + Send + Sync + 'static {
    /// State kept beside every record.
    type Meta: Default + Send + Sync + 'static;
    /// Per-thread state: reusable buffers, transaction ids, the recorder.
    type Worker: Send;
    /// A running transaction. Dropping one that has not committed aborts it.
    type Tx<'w>: Tx
    where
        Self: 'w;

    const INFO: ProtocolInfo;

    /// The most worker threads it can run (ids `0..MAX_WORKERS`): the harness refuses more with a
    /// one-line error before loading anything. Unbounded unless a protocol names its workers in
    /// fixed-size structures (the wait-die and deadlock-detection 2PLs' 63-bit owner sets).
    const MAX_WORKERS: usize = usize::MAX;

    /// Takes ownership of a loaded database.
    fn open(db: Database<Self::Meta>, config: &ProtocolConfig) -> Self;

    /// The database the protocol runs on.
    fn db(&self) -> &Database<Self::Meta>;

    /// State for worker thread `id` (ids are small, and distinct among the workers alive at once;
    /// an ended worker's id may be reused); `recording` turns the history on. Dropping a worker ends
    /// it: a later worker with its id goes on with its transaction ids ([`crate::txn::IdLedger`]),
    /// and the multi-version protocols hand it the rest of its state too.
    fn worker(&self, id: u32, recording: bool) -> Self::Worker;

    /// The worker's history recorder.
    fn recorder(worker: &mut Self::Worker) -> &mut Recorder;

    /// Starts a transaction on `worker`.
    fn begin<'w>(&'w self, worker: &'w mut Self::Worker) -> Self::Tx<'w>;

    /// Runs `program` once, to commit or abort. Interactive protocols run its pieces in order inside one
    /// transaction (the default); protocols with their own execution model override this.
    ///
    /// If the program panics, the panic reaches the caller after the transaction was rolled back (by
    /// every protocol that undoes aborts) and everything it held — locks, a queue entry, a place in
    /// a global order — was released: other workers go on (`conformance::a_panicking_program_holds_nothing`).
    fn execute<P: Program>(&self, worker: &mut Self::Worker, program: &mut P) -> TxResult<()> {
        let mut tx = self.begin(worker);
        run_pieces(program, &mut tx)?;
        tx.commit()
    }

    /// A worker thread's loop: pulls transactions from `requests` until it runs dry and reports how
    /// each ended. The default runs one transaction at a time through [`Protocol::execute`], retrying
    /// concurrency aborts with randomized exponential backoff. Protocols with their own execution
    /// model (a TxnQueue with many transactions in flight, a sequencer) override it.
    fn run_worker<R: RequestSource>(&self, worker: &mut Self::Worker, requests: &mut R) {
        run_one_at_a_time(self, worker, requests)
    }
}

/// The default worker loop ([`Protocol::run_worker`]): one transaction at a time through
/// [`Protocol::execute`], retrying concurrency aborts with randomized exponential backoff. Also
/// called by protocols that override the loop for some configurations only.
pub fn run_one_at_a_time<P: Protocol, R: RequestSource>(
    p: &P,
    worker: &mut P::Worker,
    requests: &mut R,
) {
    let mut backoff = Backoff::new(RetryPolicy::default(), requests.seed());
    let mut program = requests.program();
    while let Some(ticket) = requests.next(&mut program) {
        let outcome = execute_retrying(p, worker, &mut program, requests, &mut backoff);
        requests.finished(ticket, outcome);
    }
}

/// Runs `program` through [`Protocol::execute`] until it commits or aborts for good, reporting each
/// retryable abort to `requests` and backing off before the next attempt: the default worker loop's
/// step, also taken by protocols whose own loop runs programs the same way (`nocc`). Once the run is
/// over ([`RequestSource::over`]), a retryable abort ends it: under heavy contention with
/// timeout-broken deadlocks (`acid-2pl` with 64 sleeping workers on ten rows) retrying to a commit
/// kept a finished run going for minutes.
#[inline]
pub fn execute_retrying<P: Protocol, G: Program, R: RequestSource>(
    p: &P,
    worker: &mut P::Worker,
    program: &mut G,
    requests: &mut R,
    backoff: &mut Backoff,
) -> TxResult<()> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        match p.execute(worker, program) {
            Ok(()) => return Ok(()),
            Err(a) if a.is_retryable() && !requests.over() => {
                requests.aborted(a.reason);
                backoff.wait(attempt);
            }
            Err(a) => return Err(a),
        }
    }
}

/// Something to do with a protocol chosen by name at run time (see [`with_protocol`]).
pub trait ProtocolVisitor {
    type Output;
    fn visit<P: Protocol>(self) -> Self::Output;
}

/// No protocol has that name.
#[derive(Debug, thiserror::Error)]
#[error("unknown protocol `{0}` (known: {known})", known = names().join(", "))]
pub struct UnknownProtocol(pub String);

macro_rules! registry {
    ($($ty:ty),* $(,)?) => {
        /// Every protocol, in listing order.
        pub fn all() -> Vec<&'static ProtocolInfo> {
            vec![$(&<$ty as Protocol>::INFO),*]
        }
        /// Calls `visitor` with the protocol called `name`.
        pub fn with_protocol<V: ProtocolVisitor>(name: &str, visitor: V) -> Result<V::Output, UnknownProtocol> {
            $(if name == <$ty as Protocol>::INFO.name { return Ok(visitor.visit::<$ty>()); })*
            Err(UnknownProtocol(name.to_string()))
        }
    };
}

registry!(
    nocc::NoCC,
    twopl::TwoPl<twopl::NoWait>,
    twopl::TwoPl<twopl::WaitDie>,
    twopl::TwoPl<twopl::Detect>,
    twopl::TwoPl<twopl::TableNoWait>,
    twopl::TwoPl<twopl::TableDetect>,
    twopl::Ordered2pl,
    twopl::LockingCoarse,
    deterministic::DeadlockFree2pl,
    silo::Silo,
    silo::SiloRc,
    mvcc::Mvcc<mvcc::Rc>,
    mvcc::Mvcc<mvcc::Si>,
    mvcc::Mvcc<mvcc::Ssi>,
    vll::Vll<vll::Basic>,
    vll::Vll<vll::WithSca>,
    vll::Vll<vll::ArrayedCounters>,
    vll::Vll<vll::Ranges>,
    vll::Vll<vll::RangesSca>,
    deterministic::Calvin,
    deterministic::CalvinVll,
    partitioned::HStore,
    partitioned::HStoreLockMgr,
    partitioned::VllPartitioned,
    partitioned::VllPartitionedSca,
    partitioned::VllPartitionedArrayed,
    pwv::Pwv<pwv::Fine>,
    pwv::Pwv<pwv::Coarse>,
    ic3::Ic3Plain,
    ic3::Ic3Comm,
    dibs::Dibs<dibs::Full>,
    dibs::Dibs<dibs::Naive>,
    salt::SaltProtocol,
    salt::SaltLocal,
    salt::Acid2pl,
    callas::CallasRc,
    callas::CallasSer,
    sc_chopping::ScChoppingRc,
    sc_chopping::ScChoppingSer,
);

/// The names of every protocol.
pub fn names() -> Vec<&'static str> {
    all().into_iter().map(|i| i.name).collect()
}

/// The info of the protocol called `name`.
pub fn info(name: &str) -> Option<&'static ProtocolInfo> {
    all().into_iter().find(|i| i.name == name)
}

#[cfg(test)]
mod retry_tests {
    use super::nocc::NoCC;
    use super::{execute_retrying, Protocol, ProtocolConfig};
    use crate::storage::Database;
    use crate::txn::{
        Abort, AbortReason, Access, Backoff, Program, RequestSource, RetryPolicy, Ticket, Tx,
        TxResult,
    };

    /// A transaction that always aborts with a retryable reason (a deadlock that never clears).
    #[derive(Default)]
    struct Doomed {
        attempts: u32,
    }

    impl Program for Doomed {
        fn name(&self) -> &'static str {
            "Doomed"
        }
        fn pieces(&self) -> usize {
            1
        }
        fn declare(&self, _: usize, _: &mut Vec<Access>) {}
        fn run_piece<X: Tx>(&mut self, _: usize, _: &mut X) -> TxResult<()> {
            self.attempts += 1;
            Err(Abort::new(AbortReason::Deadlock))
        }
    }

    /// A source whose run is over after `live` retryable aborts.
    struct Ending {
        live: u32,
        aborts: u32,
    }

    impl RequestSource for Ending {
        type Program = Doomed;
        fn program(&self) -> Doomed {
            Doomed::default()
        }
        fn next(&mut self, _: &mut Doomed) -> Option<Ticket> {
            None
        }
        fn aborted(&mut self, _: AbortReason) {
            self.aborts += 1;
        }
        fn finished(&mut self, _: Ticket, _: Result<(), Abort>) {}
        fn seed(&self) -> u64 {
            7
        }
        fn over(&self) -> bool {
            self.aborts >= self.live
        }
    }

    /// While the run goes on a retryable abort is retried; once it is over, the next one ends the
    /// transaction (it is not retried until it commits, which may be never).
    #[test]
    fn a_retryable_abort_ends_the_transaction_once_the_run_is_over() {
        let p = NoCC::open(Database::new(), &ProtocolConfig::default());
        let mut w = p.worker(0, false);
        let mut src = Ending { live: 3, aborts: 0 };
        let mut prog = Doomed::default();
        let mut backoff = Backoff::new(RetryPolicy::default(), 1);
        let out = execute_retrying(&p, &mut w, &mut prog, &mut src, &mut backoff);
        assert_eq!(out.unwrap_err().reason, AbortReason::Deadlock);
        assert_eq!((src.aborts, prog.attempts), (3, 4));
    }
}
