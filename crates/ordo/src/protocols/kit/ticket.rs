//! A fair reader-writer lock word for locking that *waits* (ordered locking: `2pl-ordered`,
//! `locking-coarse`; `ic3`'s piece locks): a **reader-writer ticket lock** (Mellor-Crummey & Scott, "Scalable
//! reader-writer synchronization for shared-memory multiprocessors", PPoPP 1991, §2), one
//! `AtomicU64` beside each record as the other 2PLs' words are.
//!
//! Why not 2PL no-wait's `CountLock`, no-wait's reader count? Its readers get in whenever no writer
//! holds the lock, so a writer *waiting* for the readers to leave can wait forever while new readers
//! keep arriving. No-wait never waits, so it never minds; ordered locking waits for every lock, and
//! on TPC-C it would starve Payment (which writes the warehouse row) behind New-Orders (which read
//! it, and — the warehouse being first in the lock order — hold it while they queue for their
//! district). The PWV paper's baseline uses MCS reader-writer latches, which queue their waiters in
//! arrival order; a ticket lock gives the same first-come-first-served order with one word and no
//! queue nodes:
//!
//! ```text
//!  bits  0..16  next           the next ticket to hand out
//!  bits 16..32  read turn      tickets below it may read  (a reader that enters passes it on; a writer, when it leaves)
//!  bits 32..48  write turn     tickets below it have left (every holder passes it on when it leaves)
//!
//!  reader with ticket t: wait until read turn = t, then read turn = t + 1 (the next reader may join)
//!  writer with ticket t: wait until write turn = t (everyone before it has left)
//!  a reader leaves: write turn += 1;   a writer leaves: read turn += 1, write turn += 1
//! ```
//!
//! Uncontended it costs what a counting word does: a reader that finds read turn = next takes its
//! ticket and passes the read turn on in one compare-and-swap, a writer that finds write turn = next
//! takes its ticket in one; leaving is one more. Fields are 16 bits and wrap (at most 65,535
//! waiters per record). A waiter spins, then yields, and marks its wait ([`crate::txn::wait`]).
//! Tickets cannot be given back, so a waiter never gives up: ordered locking has no deadlock to give
//! up for ([`TicketLock::try_acquire`] takes no ticket unless it gets in at once).

use super::lock_request::Mode;
use crate::txn::wait;
use crossbeam_utils::Backoff;
use std::sync::atomic::{AtomicU64, Ordering};

const NEXT: u32 = 0;
const READ: u32 = 16;
const WRITE: u32 = 32;

/// The field at `shift` of word `w`.
#[inline]
fn field(w: u64, shift: u32) -> u16 {
    (w >> shift) as u16
}

/// `w` with the field at `shift` one higher (wrapping inside the field).
#[inline]
fn bump(w: u64, shift: u32) -> u64 {
    let f = field(w, shift).wrapping_add(1) as u64;
    (w & !(0xFFFF << shift)) | (f << shift)
}

/// The fair reader-writer lock word (see the module docs).
#[derive(Debug, Default)]
pub struct TicketLock(AtomicU64);

impl TicketLock {
    /// Takes the lock in `mode`, waiting for every earlier ticket's holder that conflicts.
    #[inline]
    pub fn acquire(&self, mode: Mode) {
        let mut w = self.0.load(Ordering::Relaxed);
        loop {
            let next = field(w, NEXT);
            // Nobody ahead excludes us: take the ticket and go in, in one step.
            let free = match mode {
                Mode::Shared => field(w, READ) == next,
                Mode::Exclusive => field(w, WRITE) == next,
            };
            let new = match mode {
                Mode::Shared if free => bump(bump(w, NEXT), READ),
                _ => bump(w, NEXT),
            };
            match self
                .0
                .compare_exchange_weak(w, new, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) if free => return,
                Ok(_) => return self.wait_turn(next, mode),
                Err(cur) => w = cur,
            }
        }
    }

    /// Takes the lock in `mode` if nobody holds or waits for it in a conflicting way; otherwise
    /// takes no ticket and returns `false` (a caller that may not wait here, or must not wait
    /// without a time limit, polls with it).
    #[inline]
    pub fn try_acquire(&self, mode: Mode) -> bool {
        let mut w = self.0.load(Ordering::Relaxed);
        loop {
            let next = field(w, NEXT);
            let new = match mode {
                Mode::Shared if field(w, READ) == next => bump(bump(w, NEXT), READ),
                Mode::Exclusive if field(w, WRITE) == next => bump(w, NEXT),
                _ => return false,
            };
            match self
                .0
                .compare_exchange_weak(w, new, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(cur) => w = cur,
            }
        }
    }

    /// Waits with ticket `t` until its turn for `mode` comes.
    #[cold]
    fn wait_turn(&self, t: u16, mode: Mode) {
        let turn = match mode {
            Mode::Shared => READ,
            Mode::Exclusive => WRITE,
        };
        let waiting = wait::blocked();
        let backoff = Backoff::new();
        while field(self.0.load(Ordering::Acquire), turn) != t {
            backoff.snooze();
            waiting.round();
        }
        if mode == Mode::Shared {
            // Let the next ticket's reader join.
            self.update(|w| bump(w, READ), Ordering::AcqRel);
        }
    }

    /// Releases a hold in `mode`.
    #[inline]
    pub fn release(&self, mode: Mode) {
        match mode {
            Mode::Shared => self.update(|w| bump(w, WRITE), Ordering::Release),
            Mode::Exclusive => self.update(|w| bump(bump(w, READ), WRITE), Ordering::Release),
        }
    }

    #[inline]
    fn update(&self, f: impl Fn(u64) -> u64, order: Ordering) {
        let mut w = self.0.load(Ordering::Relaxed);
        while let Err(cur) = self
            .0
            .compare_exchange_weak(w, f(w), order, Ordering::Relaxed)
        {
            w = cur;
        }
    }

    /// Whether nobody holds or waits for it (every ticket handed out has left).
    pub fn is_free(&self) -> bool {
        let w = self.0.load(Ordering::Acquire);
        field(w, WRITE) == field(w, NEXT)
    }

    /// The raw word (tests and diagnostics).
    pub fn word(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Runs `f` on a thread and says whether it finished within 100 ms (`false`: it waits), then
    /// lets it finish after `then`.
    fn waits(f: impl FnOnce() + Send, then: impl FnOnce()) -> bool {
        let (tx, rx) = mpsc::channel();
        std::thread::scope(|s| {
            s.spawn(move || {
                f();
                tx.send(()).unwrap();
            });
            let waited = rx.recv_timeout(Duration::from_millis(100)).is_err();
            then();
            if waited {
                rx.recv_timeout(Duration::from_secs(10))
                    .expect("it gets in once the holders left");
            }
            waited
        })
    }

    #[test]
    fn try_acquire_gets_in_only_when_nothing_conflicts_and_leaves_no_ticket() {
        let l = TicketLock::default();
        assert!(l.try_acquire(Mode::Shared));
        assert!(l.try_acquire(Mode::Shared));
        assert!(!l.try_acquire(Mode::Exclusive));
        l.release(Mode::Shared);
        l.release(Mode::Shared);
        assert!(l.is_free(), "a failed try took no ticket");
        assert!(l.try_acquire(Mode::Exclusive));
        assert!(!l.try_acquire(Mode::Shared));
        assert!(!l.try_acquire(Mode::Exclusive));
        l.release(Mode::Exclusive);
        assert!(l.is_free());
    }

    #[test]
    fn readers_share_writers_exclude() {
        let l = TicketLock::default();
        l.acquire(Mode::Shared);
        l.acquire(Mode::Shared);
        assert!(!l.is_free());
        assert!(waits(
            || l.acquire(Mode::Exclusive),
            || {
                l.release(Mode::Shared);
                l.release(Mode::Shared);
            }
        ));
        // The writer holds it now.
        assert!(waits(
            || l.acquire(Mode::Shared),
            || l.release(Mode::Exclusive)
        ));
        l.release(Mode::Shared);
        assert!(l.is_free());
    }

    /// First come, first served: a reader that arrives after a waiting writer waits behind it,
    /// although the lock is only held shared (so a stream of readers cannot starve a writer).
    #[test]
    fn a_reader_queues_behind_a_waiting_writer() {
        let l = TicketLock::default();
        l.acquire(Mode::Shared);
        let (tx, rx) = mpsc::channel();
        std::thread::scope(|s| {
            let l = &l;
            let writer = s.spawn(move || {
                l.acquire(Mode::Exclusive);
                tx.send("writer").unwrap();
                std::thread::sleep(Duration::from_millis(20));
                l.release(Mode::Exclusive);
            });
            while field(l.word(), NEXT) != 2 {
                std::thread::yield_now(); // the writer has its ticket
            }
            let reader = s.spawn(move || {
                l.acquire(Mode::Shared);
                l.release(Mode::Shared);
            });
            std::thread::sleep(Duration::from_millis(50));
            assert!(
                !reader.is_finished(),
                "the reader overtook the waiting writer"
            );
            l.release(Mode::Shared);
            assert_eq!(rx.recv().unwrap(), "writer");
            writer.join().unwrap();
            reader.join().unwrap();
        });
        assert!(l.is_free());
    }

    /// Tickets wrap around their 16 bits.
    #[test]
    fn fields_wrap() {
        let l = TicketLock::default();
        for i in 0..70_000u32 {
            let m = if i % 3 == 0 {
                Mode::Exclusive
            } else {
                Mode::Shared
            };
            l.acquire(m);
            l.release(m);
        }
        assert!(l.is_free());
        assert_eq!(l.word() >> 48, 0, "no carry out of the fields");
    }

    /// Four threads increment a plain counter under the lock, and read it twice under a shared
    /// hold: no increment is lost and no reader sees a change mid-read.
    #[test]
    fn exclusive_holds_are_exclusive() {
        let l = TicketLock::default();
        let v = AtomicU64::new(0);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let (l, v) = (&l, &v);
                s.spawn(move || {
                    for i in 0..5_000u64 {
                        if (i + t) % 2 == 0 {
                            l.acquire(Mode::Exclusive);
                            let x = v.load(Ordering::Relaxed);
                            std::hint::spin_loop();
                            v.store(x + 1, Ordering::Relaxed);
                            l.release(Mode::Exclusive);
                        } else {
                            l.acquire(Mode::Shared);
                            let a = v.load(Ordering::Relaxed);
                            std::hint::spin_loop();
                            assert_eq!(a, v.load(Ordering::Relaxed));
                            l.release(Mode::Shared);
                        }
                    }
                });
            }
        });
        assert_eq!(v.load(Ordering::Relaxed), 4 * 2_500);
        assert!(l.is_free());
    }
}
