//! Joining a run's worker threads without hanging when one of them panics.
//!
//! A worker that panics (a workload's program with a bug, say) unwinds out of its protocol's worker
//! loop. The planning protocols' loops keep several transactions admitted at once — queued in a
//! TxnQueue, sequenced for a lock-manager thread, waiting in a partition — and those stay held by
//! nobody: the other workers then wait for them forever, and a scope joining every thread would
//! hang with them (a CI job would sit out its time limit instead of failing). So the harness joins
//! its workers here: a panic is re-raised once the others have finished, as a plain `join` would,
//! and if they have not finished [`AFTER_A_PANIC`] later the process exits with status 101, saying
//! which worker panicked.

use std::any::Any;
use std::io::Write;
use std::thread::ScopedJoinHandle;
use std::time::{Duration, Instant};

/// How long the other workers get to finish once one has panicked.
pub const AFTER_A_PANIC: Duration = Duration::from_secs(10);

/// What [`join_workers`] saw: every result in order, or the first panic and whether the other
/// workers all finished within `grace` of it.
enum Joined<T> {
    All(Vec<T>),
    Panicked {
        worker: usize,
        payload: Box<dyn Any + Send>,
        stuck: usize,
    },
}

/// Joins `handles` (worker `i` is `handles[i]`) and returns their results in order. If a worker
/// panicked, its panic is resumed here once the others finished; if some have not finished
/// [`AFTER_A_PANIC`] after it, the process exits with status 101 (see the module docs).
pub fn join_workers<T>(handles: Vec<ScopedJoinHandle<'_, T>>) -> Vec<T> {
    match join_within(handles, AFTER_A_PANIC) {
        Joined::All(results) => results,
        Joined::Panicked {
            payload, stuck: 0, ..
        } => std::panic::resume_unwind(payload),
        Joined::Panicked {
            worker,
            payload,
            stuck,
        } => {
            let message = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("(not a string)");
            // Straight to stderr: `eprintln!` output (and the panic's own message) may be captured,
            // as under `cargo test`, and would be lost with the exit.
            let _ = writeln!(
                std::io::stderr(),
                "error: worker {worker} panicked: {message}\n\
                 {stuck} other worker(s) had not finished {} s later: they wait for transactions \
                 it had admitted and will never finish. Exiting.",
                AFTER_A_PANIC.as_secs()
            );
            std::process::exit(101)
        }
    }
}

/// [`join_workers`] with the grace period as a parameter, returning instead of exiting.
fn join_within<T>(handles: Vec<ScopedJoinHandle<'_, T>>, grace: Duration) -> Joined<T> {
    let mut handles: Vec<Option<ScopedJoinHandle<'_, T>>> = handles.into_iter().map(Some).collect();
    let mut results: Vec<Option<T>> = handles.iter().map(|_| None).collect();
    let mut panic: Option<(usize, Box<dyn Any + Send>, Instant)> = None;
    loop {
        let mut running = 0;
        for (i, slot) in handles.iter_mut().enumerate() {
            match slot.take_if(|h| h.is_finished()) {
                Some(h) => match h.join() {
                    Ok(r) => results[i] = Some(r),
                    Err(payload) => {
                        panic.get_or_insert((i, payload, Instant::now()));
                    }
                },
                None if slot.is_some() => running += 1,
                None => {}
            }
        }
        match panic {
            Some((worker, payload, _)) if running == 0 => {
                return Joined::Panicked {
                    worker,
                    payload,
                    stuck: 0,
                }
            }
            Some((worker, payload, at)) if at.elapsed() >= grace => {
                return Joined::Panicked {
                    worker,
                    payload,
                    stuck: running,
                }
            }
            None if running == 0 => {
                return Joined::All(
                    results
                        .into_iter()
                        .map(|r| r.expect("every worker returned"))
                        .collect(),
                )
            }
            _ => {}
        }
        // Worker threads end at the end of a run, so a short poll costs little and adds at most
        // this much to it.
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn results_come_back_in_worker_order() {
        let out = std::thread::scope(|s| {
            let handles = (0..4u64)
                .map(|i| {
                    s.spawn(move || {
                        std::thread::sleep(Duration::from_millis(10 * (4 - i)));
                        i * 10
                    })
                })
                .collect();
            join_workers(handles)
        });
        assert_eq!(out, vec![0, 10, 20, 30]);
    }

    #[test]
    fn a_panic_is_resumed_once_the_others_finished() {
        let caught = std::panic::catch_unwind(|| {
            std::thread::scope(|s| {
                let handles = vec![
                    s.spawn(|| std::panic::resume_unwind(Box::new("worker 0 failed"))),
                    s.spawn(|| std::thread::sleep(Duration::from_millis(50))),
                ];
                join_workers(handles)
            })
        });
        let payload = caught.expect_err("the worker's panic reaches the caller");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"worker 0 failed"));
    }

    /// A worker stuck behind the panicked one is reported after the grace period instead of
    /// waited for (here it is then let go, so that the scope can end).
    #[test]
    fn a_worker_stuck_after_a_panic_is_reported_not_waited_for() {
        let (release, stuck) = mpsc::channel::<()>();
        std::thread::scope(|s| {
            let handles = vec![
                s.spawn(move || {
                    let _ = stuck.recv();
                }),
                s.spawn(|| std::panic::resume_unwind(Box::new("worker 1 failed"))),
            ];
            match join_within(handles, Duration::from_millis(50)) {
                Joined::Panicked { worker, stuck, .. } => assert_eq!((worker, stuck), (1, 1)),
                Joined::All(_) => panic!("worker 1 panicked"),
            }
            release.send(()).unwrap();
        });
    }
}
