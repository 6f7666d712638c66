//! The machine's memory, which bounds what a benchmark may load.
//!
//! [`super::bench::open`] gives every database it loads this limit
//! ([`crate::storage::Database::set_memory_limit`]), so a workload too large for the machine
//! (`--rows 10^14`, 65,535 TPC-C warehouses) is refused when its tables are declared, with a message
//! that says how much it needs, instead of loading until the kernel kills the process.

/// The machine's physical memory in bytes (`MemTotal` of `/proc/meminfo`); `None` where that cannot
/// be read (not Linux), and then nothing is refused.
pub fn physical() -> Option<u64> {
    parse_meminfo(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

/// `MemTotal` (in kB) of a `/proc/meminfo` text, in bytes.
fn parse_meminfo(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line["MemTotal:".len()..].split_whitespace();
    let kb: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") | None => kb.checked_mul(1024),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memtotal_is_read_in_bytes() {
        let text = "MemTotal:       24684096 kB\nMemFree:         1000 kB\n";
        assert_eq!(parse_meminfo(text), Some(24_684_096 * 1024));
        assert_eq!(parse_meminfo("MemFree: 1 kB\n"), None);
        assert_eq!(parse_meminfo("MemTotal: lots kB\n"), None);
        assert_eq!(parse_meminfo("MemTotal: 5 MB\n"), None);
        if cfg!(target_os = "linux") {
            assert!(physical().is_some_and(|b| b > 1 << 20));
        }
    }
}
