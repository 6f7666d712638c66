//! Pinning benchmark workers to CPUs (`ordo bench --pin`), as DBx1000 pins its worker threads.
//!
//! Unpinned, the kernel may move a worker between cores, or run two on one core while another
//! idles, in the middle of a measured interval: with many cores a migration costs the worker its
//! cache and its place in the others' cache-line traffic. Pinned, worker `t` runs only on the `t`-th
//! CPU of the set the process may use (round robin when there are more workers than CPUs), so a
//! thread-scaling sweep measures the protocol, not the scheduler's placement. Threads a protocol
//! starts itself (Calvin's sequencer and lock-manager thread) are not pinned.
//!
//! Measured on the 2-vCPU development VM (`docs/results/vll.md`): no difference, as expected where
//! every worker has a core of its own anyway; the option is for the many-core figures.

/// Why workers could not be pinned.
#[derive(Debug, thiserror::Error)]
pub enum AffinityError {
    #[error("cannot read this process's CPU affinity: {0}")]
    Unreadable(std::io::Error),
    #[error("this process may run on no CPU")]
    NoCpu,
    #[error("CPU {0} is beyond what an affinity mask holds")]
    BeyondMask(usize),
    #[error("cannot pin a worker to CPU {cpu}: {source}")]
    Refused { cpu: usize, source: std::io::Error },
    #[error("--pin (pinning workers to CPUs) is supported on Linux only")]
    Unsupported,
}

/// The CPUs this process may run on, in increasing order (Linux: `sched_getaffinity`).
#[cfg(target_os = "linux")]
pub fn allowed_cpus() -> Result<Vec<usize>, AffinityError> {
    // SAFETY: `cpu_set_t` is plain data (all zeros is the empty set), and the size passed is its own.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(AffinityError::Unreadable(std::io::Error::last_os_error()));
        }
        set
    };
    let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is below CPU_SETSIZE, the set's capacity.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect();
    if cpus.is_empty() {
        return Err(AffinityError::NoCpu);
    }
    Ok(cpus)
}

/// The CPUs this process may run on: pinning is supported on Linux only.
#[cfg(not(target_os = "linux"))]
pub fn allowed_cpus() -> Result<Vec<usize>, AffinityError> {
    Err(AffinityError::Unsupported)
}

/// The CPU worker `worker` is pinned to: the `worker`-th of `cpus`, round robin.
pub fn cpu_for(cpus: &[usize], worker: usize) -> usize {
    cpus[worker % cpus.len()]
}

/// Restricts the calling thread to CPU `cpu`.
#[cfg(target_os = "linux")]
pub fn pin_current_thread(cpu: usize) -> Result<(), AffinityError> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(AffinityError::BeyondMask(cpu));
    }
    // SAFETY: as in `allowed_cpus`; `cpu` is below CPU_SETSIZE (checked above).
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc != 0 {
        return Err(AffinityError::Refused {
            cpu,
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

/// Restricts the calling thread to CPU `cpu`: supported on Linux only.
#[cfg(not(target_os = "linux"))]
pub fn pin_current_thread(_cpu: usize) -> Result<(), AffinityError> {
    allowed_cpus().map(|_| ())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// A pinned thread's own affinity is that one CPU; another thread's is left as it was.
    #[test]
    fn a_pinned_thread_runs_on_its_cpu_only() {
        let before = allowed_cpus().expect("affinity readable");
        let cpu = cpu_for(&before, 1);
        let inside = std::thread::spawn(move || {
            pin_current_thread(cpu).expect("pin to an allowed CPU");
            allowed_cpus().expect("affinity readable")
        })
        .join()
        .expect("pinning thread");
        assert_eq!(inside, vec![cpu]);
        assert_eq!(allowed_cpus().expect("affinity readable"), before);
    }

    #[test]
    fn workers_go_round_robin_over_the_allowed_cpus() {
        let cpus = [2, 5, 7];
        let got: Vec<usize> = (0..7).map(|w| cpu_for(&cpus, w)).collect();
        assert_eq!(got, [2, 5, 7, 2, 5, 7, 2]);
    }

    #[test]
    fn a_cpu_outside_the_mask_is_an_error() {
        let e = pin_current_thread(libc::CPU_SETSIZE as usize).unwrap_err();
        assert!(e.to_string().contains("beyond"), "{e}");
    }
}
