//! The pipeline behind the worker threads: sequencer thread → lock-manager thread → ready queues.
//!
//! ```text
//!  worker (client) ──Request{locks, notify}──▶ sequencer ──Batch[(seq, req)]──▶ lock manager
//!        ▲                                                                        │ grants in seq order
//!        └──────────────── Ready{seq, tag} (all locks granted) ◀───────────────────┘
//!  worker executes the program it kept, then ──Release(seq)──▶ lock manager
//! ```
//!
//! A program never leaves the thread that drew it: the pipeline sees only its lock set, and tells the
//! owner (through the `notify` queue the request carries) when every lock is granted. The owner keeps
//! several transactions in flight and executes whichever of them becomes ready.
//!
//! **Barriers**: an interactive transaction ([`crate::protocols::Protocol::begin`]) has no declared
//! lock set, so it is ordered like any request but admitted only when every earlier transaction has
//! released, and nothing after it is admitted until it releases: it holds the whole database.
//!
//! **Shutdown**: dropping the [`Engine`] sends `Shutdown` to the sequencer, which hands on what it
//! has, forwards `Shutdown` to the lock manager, and both threads are joined. Nothing can be in flight
//! then: transactions borrow the protocol, and worker loops return only when theirs have finished.

use super::sequencer::{self, SeqMsg};
use crate::protocols::kit::plan::LockRequest;
use crate::protocols::kit::recv::recv_polling;
use crate::protocols::kit::scheduler::{Scheduler, SeqSlab};
use crate::protocols::ProtocolConfig;
use std::collections::VecDeque;
use std::marker::PhantomData;
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::sync::Mutex;
use std::thread::JoinHandle;

/// A transaction's lock request as the clients send it.
pub struct Request {
    /// Sorted, deduplicated key locks (ignored for a barrier).
    pub locks: Vec<LockRequest>,
    /// Whether it must hold the whole database.
    pub barrier: bool,
    /// Where to say that it may run.
    pub notify: Sender<Ready>,
    /// Returned in [`Ready::tag`] (the owner's slot).
    pub tag: u64,
}

/// "Every lock of transaction `seq` is granted": execute it, then release `seq`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ready {
    pub seq: u64,
    pub tag: u64,
}

/// What the lock-manager thread receives.
pub enum LmMsg {
    Batch(Vec<(u64, Request)>),
    Release(u64),
    Shutdown,
}

/// The running pipeline: the sequencer and lock-manager threads and the queues into them.
pub struct Engine<S: Scheduler> {
    to_sequencer: Sender<SeqMsg>,
    to_lock_manager: Sender<LmMsg>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    _s: PhantomData<fn() -> S>,
}

impl<S: Scheduler> Engine<S> {
    /// Starts the sequencer and lock-manager threads; the scheduler reads its knobs from `config`.
    pub fn start(name: &str, config: &ProtocolConfig) -> Self {
        let config = config.clone();
        let (seq_tx, seq_rx) = mpsc::channel();
        let (lm_tx, lm_rx) = mpsc::channel();
        let lm_for_seq = lm_tx.clone();
        let sequencer = std::thread::Builder::new()
            .name(format!("{name}-sequencer"))
            .spawn(move || sequencer::run(seq_rx, lm_for_seq))
            .expect("spawn the sequencer thread");
        let lock_manager = std::thread::Builder::new()
            .name(format!("{name}-lock-manager"))
            .spawn(move || Admission::<S>::new(&config).run(lm_rx))
            .expect("spawn the lock-manager thread");
        Engine {
            to_sequencer: seq_tx,
            to_lock_manager: lm_tx,
            threads: Mutex::new(vec![sequencer, lock_manager]),
            _s: PhantomData,
        }
    }

    /// Sends a request to be ordered.
    pub fn submit(&self, request: Request) {
        self.to_sequencer
            .send(SeqMsg::Request(request))
            .expect("the sequencer runs while the protocol lives");
    }

    /// Transaction `seq` finished (committed or rolled back): release its locks.
    pub fn release(&self, seq: u64) {
        self.to_lock_manager
            .send(LmMsg::Release(seq))
            .expect("the lock manager runs while the protocol lives");
    }
}

impl<S: Scheduler> Drop for Engine<S> {
    fn drop(&mut self) {
        let _ = self.to_sequencer.send(SeqMsg::Shutdown);
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        for t in threads {
            let _ = t.join();
        }
    }
}

/// How many ordered transactions ahead of the one it admits the lock-manager thread prefetches the
/// lock state of ([`Scheduler::prefetch`]): VLL's arrayed counters are indexed by row, so each
/// request of a large table misses the cache, and a request waits for its own misses one key after
/// another unless they were started earlier.
const PREFETCH_AHEAD: usize = 4;

/// Where to notify each admitted transaction.
struct Waiter {
    notify: Sender<Ready>,
    tag: u64,
}

/// Admission in the global order: what the lock-manager thread does with each ordered request and
/// each release — admit it to the [`Scheduler`] (held back while a barrier waits or holds, or while
/// the scheduler is full), and notify every transaction whose locks are all granted. The
/// lock-manager thread drives one (`Admission::run`); `2pl-deadlock-free`
/// ([`crate::protocols::deterministic::deadlock_free`]) drives one from every worker, inside a critical section.
pub struct Admission<S: Scheduler> {
    scheduler: S,
    /// Ordered but not yet admitted (only while a barrier waits or holds, or the scheduler is full).
    pending: VecDeque<(u64, Request)>,
    waiters: SeqSlab<Waiter>,
    /// Admitted transactions not yet released (barriers excluded).
    active: usize,
    /// The barrier holding the database, if any.
    barrier: Option<u64>,
    ready: Vec<u64>,
}

impl<S: Scheduler> Admission<S> {
    /// An empty admission whose scheduler reads its knobs from `config`.
    pub fn new(config: &ProtocolConfig) -> Self {
        let mut scheduler = S::default();
        scheduler.configure(config);
        Admission {
            scheduler,
            pending: VecDeque::new(),
            waiters: SeqSlab::default(),
            active: 0,
            barrier: None,
            ready: Vec::new(),
        }
    }

    /// The lock-manager thread's loop (see the module docs).
    fn run(mut self, rx: Receiver<LmMsg>) {
        let mut send = |w: &Sender<Ready>, r: Ready| {
            let _ = w.send(r);
        };
        loop {
            let msg = match rx.try_recv() {
                Ok(m) => m,
                Err(TryRecvError::Disconnected) => return,
                Err(TryRecvError::Empty) => {
                    if self.scheduler.idle(&mut self.ready) {
                        self.notify_ready(&mut send);
                        self.admit(&mut send);
                        continue;
                    }
                    match recv_polling(&rx) {
                        Ok(m) => m,
                        Err(_) => return,
                    }
                }
            };
            match msg {
                LmMsg::Batch(batch) => {
                    let before = self.pending.len();
                    self.pending.extend(batch);
                    for i in before..self.pending.len().min(PREFETCH_AHEAD) {
                        self.scheduler.prefetch(&self.pending[i].1.locks);
                    }
                    self.admit(&mut send);
                }
                LmMsg::Release(seq) => self.release(seq, &mut send),
                LmMsg::Shutdown => return,
            }
        }
    }

    /// Orders `request` as transaction `seq` (higher than every earlier one) and admits what can
    /// be; `notify` is called for each transaction that may now run, with where to tell it.
    pub fn order(
        &mut self,
        seq: u64,
        request: Request,
        notify: &mut impl FnMut(&Sender<Ready>, Ready),
    ) {
        self.pending.push_back((seq, request));
        self.admit(notify);
    }

    /// Transaction (or barrier) `seq` finished: releases it and admits what can be; `notify` as for
    /// [`Self::order`].
    pub fn release(&mut self, seq: u64, notify: &mut impl FnMut(&Sender<Ready>, Ready)) {
        if self.barrier == Some(seq) {
            self.barrier = None;
            self.waiters.remove(seq);
        } else {
            self.scheduler.release(seq, &mut self.ready);
            self.active -= 1;
            self.notify_ready(notify);
            self.waiters.remove(seq);
        }
        self.admit(notify);
    }

    /// Admits ordered requests to the scheduler, in order, up to a barrier that cannot run yet.
    fn admit(&mut self, notify: &mut impl FnMut(&Sender<Ready>, Ready)) {
        while self.barrier.is_none() && self.scheduler.admits() {
            let Some((_, front)) = self.pending.front() else {
                return;
            };
            if front.barrier && self.active > 0 {
                return;
            }
            if let Some((_, ahead)) = self.pending.get(PREFETCH_AHEAD) {
                self.scheduler.prefetch(&ahead.locks);
            }
            let (seq, r) = self.pending.pop_front().expect("front exists");
            self.waiters.insert(
                seq,
                Waiter {
                    notify: r.notify,
                    tag: r.tag,
                },
            );
            if r.barrier {
                self.barrier = Some(seq);
                self.ready.push(seq);
            } else {
                self.active += 1;
                if self.scheduler.request(seq, r.locks, &mut self.ready) {
                    self.ready.push(seq);
                }
            }
            self.notify_ready(notify);
        }
    }

    fn notify_ready(&mut self, notify: &mut impl FnMut(&Sender<Ready>, Ready)) {
        for seq in self.ready.drain(..) {
            let w = self
                .waiters
                .get(seq)
                .expect("a ready transaction is admitted");
            notify(&w.notify, Ready { seq, tag: w.tag });
        }
    }
}
