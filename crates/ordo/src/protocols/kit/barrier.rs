//! A database-wide reader-writer barrier whose read side stays on the reader's own cache line: the
//! way a protocol that locks key by key runs the rare transaction it cannot lock that way (a key
//! range too wide to enumerate, an interactive transaction that may touch anything) alone.
//!
//! Every ordinary transaction takes the barrier **shared** for as long as it holds locks; the rare
//! one takes it **exclusive** instead of any lock, which waits for every shared holder to leave and
//! keeps new ones out while it runs: it then holds the whole database. Taken before any other lock
//! (it is first in the lock order), it adds no deadlock.
//!
//! A single reader counter would be the obvious word, and every transaction of every worker would
//! then write the same cache line twice — exactly the shared hot spot a lock beside each record
//! avoids. So the read side is **per worker** (Linux's big-reader lock, `brlock`; Hsieh & Weihl's
//! per-processor reader-writer lock, 1992): worker `w` counts itself in slot `w % slots`, a line of
//! its own, and a writer raises one flag and then waits for every slot to drain.
//!
//! ```text
//!  reader (worker w)                        writer
//!  slots[w] += 1                  (SeqCst)  flag: false → true        (SeqCst; one writer at a time)
//!  if flag: slots[w] -= 1, wait until       wait until every slot is 0 (SeqCst loads)
//!           !flag, start again              … runs alone …
//!  … runs …                                 flag = false               (Release)
//!  slots[w] -= 1                  (Release)
//! ```
//!
//! The two sides are Dekker's: each writes its own word and then reads the other's, all in one
//! sequentially consistent order, so at least one of them sees the other — a reader that counted
//! itself before the writer raised the flag is waited for; one that counted itself after sees the
//! flag and backs off. A writer that has raised the flag lets no new reader in, so a stream of
//! readers cannot starve it. A slot is a count, not a flag, so workers whose ids share a slot (more
//! workers than slots: SQL sessions come and go) stay correct; they only share its line.
//!
//! Waits spin, then yield ([`crossbeam_utils::Backoff`]), and are marked [`crate::txn::wait`].

use crate::txn::wait;
use crossbeam_utils::{Backoff, CachePadded};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The barrier (see the module docs).
pub struct Barrier {
    /// Raised by the writer that holds it, or waits for the readers to drain.
    writer: CachePadded<AtomicBool>,
    /// Readers inside, per worker slot.
    readers: Box<[CachePadded<AtomicU64>]>,
}

/// A shared hold: other shared holders run beside it, no exclusive one. Released when dropped.
#[must_use = "the barrier is held only while the guard lives"]
pub struct Shared<'a>(&'a AtomicU64);

/// An exclusive hold: nothing else holds the barrier. Released when dropped.
#[must_use = "the barrier is held only while the guard lives"]
pub struct Exclusive<'a>(&'a AtomicBool);

impl Barrier {
    /// A barrier with one reader slot per worker of `workers` (at least one; a later worker with a
    /// larger id shares a slot).
    pub fn new(workers: usize) -> Self {
        Barrier {
            writer: CachePadded::new(AtomicBool::new(false)),
            readers: (0..workers.max(1))
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
        }
    }

    /// Holds the barrier shared for worker `worker`, waiting while a writer holds or wants it.
    #[inline]
    pub fn shared(&self, worker: u32) -> Shared<'_> {
        let slot = &*self.readers[worker as usize % self.readers.len()];
        loop {
            slot.fetch_add(1, Ordering::SeqCst);
            if !self.writer.load(Ordering::SeqCst) {
                return Shared(slot);
            }
            // A writer is in or on its way: step out of its way until it is done.
            slot.fetch_sub(1, Ordering::Release);
            self.wait_for_writer();
        }
    }

    #[cold]
    fn wait_for_writer(&self) {
        let waiting = wait::blocked();
        let backoff = Backoff::new();
        while self.writer.load(Ordering::Acquire) {
            backoff.snooze();
            waiting.round();
        }
    }

    /// Holds the barrier exclusive: waits for any other writer, then for every reader to leave.
    pub fn exclusive(&self) -> Exclusive<'_> {
        let backoff = Backoff::new();
        let mut waiting = None;
        while self
            .writer
            .compare_exchange_weak(false, true, Ordering::SeqCst, Ordering::Relaxed)
            .is_err()
        {
            waiting.get_or_insert_with(wait::blocked).round();
            backoff.snooze();
        }
        for slot in self.readers.iter() {
            while slot.load(Ordering::SeqCst) != 0 {
                waiting.get_or_insert_with(wait::blocked).round();
                backoff.snooze();
            }
        }
        Exclusive(&self.writer)
    }

    /// Whether nothing holds the barrier (tests, diagnostics).
    pub fn is_free(&self) -> bool {
        !self.writer.load(Ordering::SeqCst)
            && self.readers.iter().all(|s| s.load(Ordering::SeqCst) == 0)
    }
}

impl Drop for Shared<'_> {
    #[inline]
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Release);
    }
}

impl Drop for Exclusive<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn readers_share_and_a_writer_waits_for_them() {
        let b = Barrier::new(2);
        let r0 = b.shared(0);
        let r1 = b.shared(1);
        let r5 = b.shared(5); // shares slot 1 with worker 1
        assert!(!b.is_free());
        let (tx, rx) = mpsc::channel();
        std::thread::scope(|s| {
            s.spawn(|| {
                let _w = b.exclusive();
                tx.send(()).unwrap();
            });
            drop(r0);
            drop(r1);
            assert!(
                rx.recv_timeout(Duration::from_millis(100)).is_err(),
                "the writer got in beside a reader"
            );
            drop(r5);
            rx.recv_timeout(Duration::from_secs(10))
                .expect("the writer gets in once the last reader left");
        });
        assert!(b.is_free());
    }

    #[test]
    fn a_writer_keeps_readers_out() {
        let b = Barrier::new(4);
        let w = b.exclusive();
        let (tx, rx) = mpsc::channel();
        std::thread::scope(|s| {
            s.spawn(|| {
                let _r = b.shared(3);
                tx.send(()).unwrap();
            });
            assert!(
                rx.recv_timeout(Duration::from_millis(100)).is_err(),
                "a reader got in beside the writer"
            );
            drop(w);
            rx.recv_timeout(Duration::from_secs(10))
                .expect("the reader gets in once the writer left");
        });
        assert!(b.is_free());
    }

    /// Readers and writers of 4 threads on a plain counter guarded only by the barrier: a writer
    /// never sees a reader inside, and no increment is lost.
    #[test]
    fn writers_exclude_everyone() {
        let b = Barrier::new(4);
        let inside = AtomicUsize::new(0);
        let writes = AtomicU64::new(0);
        std::thread::scope(|s| {
            for t in 0..4u32 {
                let (b, inside, writes) = (&b, &inside, &writes);
                s.spawn(move || {
                    for i in 0..2_000u32 {
                        if (i + t) % 8 == 0 {
                            let _w = b.exclusive();
                            assert_eq!(inside.load(Ordering::SeqCst), 0, "a reader inside");
                            let v = writes.load(Ordering::Relaxed);
                            std::hint::spin_loop();
                            writes.store(v + 1, Ordering::Relaxed);
                        } else {
                            let _r = b.shared(t);
                            inside.fetch_add(1, Ordering::SeqCst);
                            std::hint::spin_loop();
                            inside.fetch_sub(1, Ordering::SeqCst);
                        }
                    }
                });
            }
        });
        assert_eq!(writes.load(Ordering::SeqCst), 4 * 2_000 / 8);
        assert!(b.is_free());
    }
}
