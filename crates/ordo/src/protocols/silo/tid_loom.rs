//! Model check of Silo's stable read (the seqlock reader of `tid`) with loom: a reader's
//! [`stable`] copy of a record against a committer that locks the TID word, fences, overwrites the
//! data and installs a new TID, in every interleaving and every outcome the memory model allows.
//! The committer follows `commit.rs` step for step: `tid::lock`, the `fence(SeqCst)` after Phase 1,
//! `Relaxed` data stores (as `Table::write_from`), `tid::unlock` with the commit TID.
//!
//! Breaking the reader — dropping its `Acquire` fence, or its re-check of the TID — makes the model
//! fail. The committer's half is checked less sharply: loom treats `fence(SeqCst)` more strongly
//! than C11 does, so with the Phase-1 fence in place a `Relaxed` unlock goes unnoticed (without that
//! fence the model catches it).
//!
//! Built only with `--cfg ordo_loom` (see `state_loom.rs` in the MVCC protocols):
//!
//! ```text
//! CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 RUSTFLAGS="--cfg ordo_loom" CARGO_TARGET_DIR=target/loom \
//!   cargo test -p ordo --lib --release loom
//! ```

use super::*;
use loom::sync::atomic::AtomicU64;
use loom::sync::Arc;

/// A record: its TID word and two data words that every version writes alike.
struct Record {
    tid: TidWord,
    data: [AtomicU64; 2],
}

/// One committer rewrites the record; the reader's copy must be one whole version, and the TID it
/// returns must be that version's: never half of each, never new data under the old TID.
#[test]
fn loom_a_stable_read_is_one_whole_version() {
    let (old, new) = (make(1, 1), make(1, 2));
    crate::loom_model(move || {
        let r = Arc::new(Record {
            tid: TidWord::new(old),
            data: [AtomicU64::new(10), AtomicU64::new(10)],
        });
        let w = r.clone();
        let committer = loom::thread::spawn(move || {
            let held = lock(&w.tid);
            assert_eq!(held, old);
            fence(Ordering::SeqCst);
            for d in &w.data {
                d.store(20, Ordering::Relaxed);
            }
            unlock(&w.tid, new);
        });
        let (tid, copy) = stable(&r.tid, || {
            [
                r.data[0].load(Ordering::Relaxed),
                r.data[1].load(Ordering::Relaxed),
            ]
        });
        let expected = if tid == old { 10 } else { 20 };
        assert!(tid == old || tid == new, "{tid:#x}");
        assert_eq!(copy, [expected; 2], "TID {tid:#x}");
        committer.join().expect("no panic");
    });
}
