//! Zeroed memory for the engine's big, randomly read arrays — row-arena chunks, the hash index's
//! slots, arrayed VLL counters — backed by transparent huge pages where the OS offers them.
//!
//! A table of a million rows is read at random: with 4 KiB pages nearly every record access (and
//! every index probe before it) also misses the TLB, and a 2 MiB page covers 512 times as much.
//! On Linux a mapping asks for huge pages with `madvise(MADV_HUGEPAGE)` (what `enabled = madvise`,
//! the usual setting, requires), and the advice must come **before the memory is first touched**: a
//! page faulted in as 4 KiB stays 4 KiB until `khugepaged` collapses it, slowly if ever.
//!
//! That is why this module exists. `std::alloc::alloc_zeroed` with an alignment above 16 bytes
//! (the arena's chunks are cache-line aligned) allocates and then writes the zeros itself, touching
//! every page before any advice could be given; an index built by collecting into a boxed slice
//! writes every slot the same way. Measured on a `vll-micro` run (1M rows, before this module):
//! 2 MiB of the process's 74 MiB were in huge pages.
//!
//! So a block of at least [`HUGE_PAGE`] bytes is mapped directly — an anonymous mapping reads as
//! zero without being written —, aligned to 2 MiB (over-mapped, the ends unmapped), and advised
//! before anyone writes it. A smaller block, or any block off Linux, comes from the global
//! allocator. [`alloc`] and [`free`] choose the same way from the size, so a block goes back the way
//! it came.

use std::alloc::Layout;
use std::ops::Deref;
use std::ptr::NonNull;

/// The transparent huge page size on x86-64 and most aarch64 kernels; blocks this large or larger
/// are mapped and advised.
pub const HUGE_PAGE: usize = 2 << 20;

/// Whether a block of `bytes` is mapped (and advised) rather than taken from the global allocator.
fn mapped(bytes: usize) -> bool {
    cfg!(target_os = "linux") && bytes >= HUGE_PAGE
}

fn layout(bytes: usize, align: usize) -> Layout {
    Layout::from_size_align(bytes.max(1), align).expect("zeroed block layout")
}

/// `bytes` zeroed bytes aligned to `align` (a power of two, at most [`HUGE_PAGE`]), on huge pages
/// where possible (see the module docs). Aborts through [`std::alloc::handle_alloc_error`] when
/// memory is exhausted, as `Box` and `Vec` do. Give the block back with [`free`].
pub fn alloc(bytes: usize, align: usize) -> NonNull<u8> {
    assert!(
        align.is_power_of_two() && align <= HUGE_PAGE,
        "zeroed block alignment {align}"
    );
    #[cfg(target_os = "linux")]
    if mapped(bytes) {
        if let Some(p) = map_huge(bytes) {
            return p;
        }
        std::alloc::handle_alloc_error(layout(bytes, align));
    }
    let l = layout(bytes, align);
    // SAFETY: the layout has a non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(l) };
    NonNull::new(p).unwrap_or_else(|| std::alloc::handle_alloc_error(l))
}

/// Gives back a block from [`alloc`].
///
/// # Safety
/// `p` must come from `alloc(bytes, align)` with these same `bytes` and `align`, and is freed once;
/// nothing may use the block afterwards.
pub unsafe fn free(p: NonNull<u8>, bytes: usize, align: usize) {
    #[cfg(target_os = "linux")]
    if mapped(bytes) {
        // SAFETY: `map_huge` left exactly this rounded range mapped (caller's contract).
        let r = unsafe { libc::munmap(p.as_ptr().cast(), bytes.next_multiple_of(HUGE_PAGE)) };
        debug_assert_eq!(r, 0, "munmap of a zeroed block");
        return;
    }
    // SAFETY: allocated by the global allocator with this layout (caller's contract).
    unsafe { std::alloc::dealloc(p.as_ptr(), layout(bytes, align)) }
}

/// Maps `bytes` (rounded up to whole huge pages) of zeroes at a 2 MiB boundary and advises huge
/// pages for them, before anything touches them. `None` if the kernel refuses the mapping.
#[cfg(target_os = "linux")]
fn map_huge(bytes: usize) -> Option<NonNull<u8>> {
    let len = bytes.checked_next_multiple_of(HUGE_PAGE)?;
    let over = len.checked_add(HUGE_PAGE)?;
    // SAFETY: a fresh private anonymous mapping; no existing memory is affected.
    let raw = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            over,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if raw == libc::MAP_FAILED {
        return None;
    }
    let start = raw as usize;
    let aligned = start.next_multiple_of(HUGE_PAGE);
    let (head, tail) = (aligned - start, start + over - (aligned + len));
    // SAFETY: the head and tail lie inside the mapping just made and outside the kept range; the
    // advice concerns the kept range only and is a hint (its failure changes nothing but speed).
    unsafe {
        if head > 0 {
            libc::munmap(raw, head);
        }
        if tail > 0 {
            libc::munmap((aligned + len) as *mut libc::c_void, tail);
        }
        libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
    NonNull::new(aligned as *mut u8)
}

/// A fixed-length slice of `T`s that start as all-zero bytes, in a block from [`alloc`].
pub struct ZeroedSlice<T> {
    ptr: NonNull<T>,
    len: usize,
}

// SAFETY: the slice owns its elements as a `Box<[T]>` would.
unsafe impl<T: Send> Send for ZeroedSlice<T> {}
// SAFETY: as above; shared access hands out `&T` only.
unsafe impl<T: Sync> Sync for ZeroedSlice<T> {}

impl<T> ZeroedSlice<T> {
    /// `len` elements, each all-zero bytes.
    ///
    /// # Safety
    /// All-zero bytes must be a valid `T` (atomics and integers are), and `T` must need no drop (the
    /// slice never drops its elements; checked).
    pub unsafe fn new(len: usize) -> Self {
        assert!(
            !std::mem::needs_drop::<T>(),
            "ZeroedSlice never drops its elements"
        );
        let bytes = std::mem::size_of::<T>()
            .checked_mul(len)
            .expect("zeroed slice size overflows");
        ZeroedSlice {
            ptr: alloc(bytes, std::mem::align_of::<T>()).cast(),
            len,
        }
    }
}

impl<T> Deref for ZeroedSlice<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` zero-initialized `T`s (valid by `new`'s contract) live at `ptr` while `self` does.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> std::ops::DerefMut for ZeroedSlice<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> std::fmt::Debug for ZeroedSlice<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ZeroedSlice(len {})", self.len)
    }
}

impl<T> Drop for ZeroedSlice<T> {
    fn drop(&mut self) {
        let bytes = std::mem::size_of::<T>() * self.len;
        // SAFETY: allocated in `new` with exactly these arguments; freed once, here.
        unsafe { free(self.ptr.cast(), bytes, std::mem::align_of::<T>()) }
    }
}

/// How many of the `bytes` mapped at page-aligned `p` are resident (whole pages, by `mincore`):
/// what the tests of this module and of the row arena check their first touches with.
#[cfg(all(test, target_os = "linux"))]
pub(crate) fn resident_bytes(p: *mut u8, bytes: usize) -> usize {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    let mut r = vec![0u8; bytes.div_ceil(page)];
    // SAFETY: the caller's mapping, page aligned; `r` has a byte a page.
    assert_eq!(
        unsafe { libc::mincore(p.cast(), bytes, r.as_mut_ptr()) },
        0,
        "mincore"
    );
    r.iter().filter(|&&b| b & 1 != 0).count() * page
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn blocks_small_and_large_are_zeroed_aligned_and_writable() {
        for (bytes, align) in [
            (8, 8),
            (4096, 64),
            (HUGE_PAGE - 64, 64),
            (HUGE_PAGE, 64),
            (3 * HUGE_PAGE + 4096, 64),
        ] {
            let p = alloc(bytes, align);
            assert_eq!(p.as_ptr() as usize % align, 0, "{bytes} bytes");
            if mapped(bytes) {
                assert_eq!(p.as_ptr() as usize % HUGE_PAGE, 0, "{bytes} bytes mapped");
            }
            // SAFETY: the block has `bytes` bytes; it is freed once, with its own arguments.
            unsafe {
                let s = std::slice::from_raw_parts_mut(p.as_ptr(), bytes);
                assert!(s.iter().all(|&b| b == 0), "{bytes} bytes not zeroed");
                s.fill(0xA5);
                assert_eq!((s[0], s[bytes - 1]), (0xA5, 0xA5));
                free(p, bytes, align);
            }
        }
    }

    /// The property huge pages depend on: a large block comes back with none of its pages touched
    /// (so the first touch, after the advice, can fault in a huge page), inside a mapping advised
    /// `MADV_HUGEPAGE`. Whether the kernel then finds free huge pages is its business, not checked.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_large_block_comes_back_untouched_and_advised() {
        let bytes = 4 * HUGE_PAGE;
        let p = alloc(bytes, 64);
        let touched = resident_bytes(p.as_ptr(), bytes);
        assert_eq!(
            touched, 0,
            "alloc touched {touched} bytes of the block: 4 KiB pages now, whatever the advice"
        );
        if std::path::Path::new("/sys/kernel/mm/transparent_hugepage/enabled").exists() {
            let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
            let addr = p.as_ptr() as usize;
            let mut inside = false;
            let mut flags = None;
            for line in smaps.lines() {
                if let Some((range, _)) = line.split_once(' ') {
                    if let Some((lo, hi)) = range.split_once('-') {
                        if let (Ok(lo), Ok(hi)) =
                            (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                        {
                            inside = lo <= addr && addr < hi;
                            continue;
                        }
                    }
                }
                if inside {
                    if let Some(f) = line.strip_prefix("VmFlags:") {
                        flags = Some(f.split_whitespace().map(String::from).collect::<Vec<_>>());
                    }
                }
            }
            let flags = flags.expect("the block's mapping is in /proc/self/smaps");
            assert!(flags.iter().any(|f| f == "hg"), "not advised: {flags:?}");
        }
        // SAFETY: freed once, with its own arguments.
        unsafe { free(p, bytes, 64) };
    }

    #[test]
    fn a_zeroed_slice_of_atomics_reads_zero_and_keeps_writes() {
        // SAFETY: zero is a valid AtomicU64, which needs no drop.
        let s = unsafe { ZeroedSlice::<AtomicU64>::new(HUGE_PAGE / 8 + 3) };
        assert_eq!(s.len(), HUGE_PAGE / 8 + 3);
        assert!(s.iter().all(|a| a.load(Ordering::Relaxed) == 0));
        s[s.len() - 1].store(7, Ordering::Relaxed);
        assert_eq!(s[s.len() - 1].load(Ordering::Relaxed), 7);
        // SAFETY: as above.
        let empty = unsafe { ZeroedSlice::<AtomicU64>::new(0) };
        assert!(empty.is_empty());
    }
}
