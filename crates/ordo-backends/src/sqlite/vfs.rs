//! A pass-through SQLite VFS that counts the calls that make a file durable (`xSync`), so that a
//! run can report `fdatasync` calls per committed client transaction (the paper's Fig. 5b).
//!
//! SQLite reaches the disk only through its VFS. This one, registered as [`NAME`], wraps the
//! default VFS (`unix`): every file it opens is the default VFS's file with a header in front whose
//! methods forward each call, and `xSync` adds one to a process-wide counter before forwarding.
//! On Linux the `unix` VFS's `xSync` is one `fdatasync` (or `fsync` when the file's size changed and
//! the build has no `fdatasync`) — plus, when a file is created, one on its directory, which SQLite
//! does not route through `xSync` and this does not count. The count is therefore the number of
//! times SQLite asked for durability, the quantity Fig. 5b plots, read in-process: no tracer, no
//! root, the same on every machine.
//!
//! The wrapper keeps no state of its own besides the counter, so it cannot change what SQLite
//! writes; `tests` opens a database through it and checks that a commit in WAL mode with
//! `synchronous=FULL` costs a sync and a read-only transaction none.

use rusqlite::ffi;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The VFS's registered name.
pub const NAME: &CStr = c"ordo-count";

static SYNCS: AtomicU64 = AtomicU64::new(0);

/// `xSync` calls through the counting VFS since the process started.
pub fn syncs() -> u64 {
    SYNCS.load(Ordering::Relaxed)
}

/// Registers the VFS (once per process); returns its name for `open_with_flags_and_vfs`.
pub fn register() -> Result<&'static str, String> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        // SAFETY: sqlite3_vfs_find(NULL) returns the default VFS, which lives as long as the
        // process; the new VFS is leaked, so it does too.
        unsafe {
            let real = ffi::sqlite3_vfs_find(std::ptr::null());
            if real.is_null() {
                return Err("SQLite has no default VFS".into());
            }
            let mut vfs = *real;
            vfs.szOsFile = (*real).szOsFile + std::mem::size_of::<File>() as c_int;
            vfs.pNext = std::ptr::null_mut();
            vfs.zName = NAME.as_ptr();
            vfs.pAppData = real.cast();
            vfs.xOpen = Some(open);
            let vfs = Box::into_raw(Box::new(vfs));
            let rc = ffi::sqlite3_vfs_register(vfs, 0);
            if rc != ffi::SQLITE_OK {
                return Err(format!("sqlite3_vfs_register failed with code {rc}"));
            }
        }
        Ok(())
    })
    .clone()
    .map(|()| NAME.to_str().expect("ASCII name"))
}

/// The file SQLite allocates (`szOsFile` bytes): this header, then the default VFS's file.
#[repr(C)]
struct File {
    base: ffi::sqlite3_file,
    real: *mut ffi::sqlite3_file,
}

/// # Safety
/// Called by SQLite with a buffer of `szOsFile` bytes at `file`.
unsafe extern "C" fn open(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let real_vfs = (*vfs).pAppData as *mut ffi::sqlite3_vfs;
    let me = file as *mut File;
    let real = (file as *mut u8).add(std::mem::size_of::<File>()) as *mut ffi::sqlite3_file;
    (*real).pMethods = std::ptr::null();
    (*me).real = real;
    let Some(real_open) = (*real_vfs).xOpen else {
        (*me).base.pMethods = std::ptr::null();
        return ffi::SQLITE_CANTOPEN;
    };
    let rc = real_open(real_vfs, name, real, flags, out_flags);
    // SQLite calls xClose on a file whose pMethods is set, even after a failed open.
    (*me).base.pMethods = if (*real).pMethods.is_null() {
        std::ptr::null()
    } else {
        &METHODS
    };
    rc
}

unsafe fn inner(
    f: *mut ffi::sqlite3_file,
) -> (*mut ffi::sqlite3_file, &'static ffi::sqlite3_io_methods) {
    let real = (*(f as *mut File)).real;
    (real, &*(*real).pMethods)
}

macro_rules! forward {
    ($name:ident, $field:ident, ($($arg:ident : $ty:ty),*) -> c_int) => {
        unsafe extern "C" fn $name(f: *mut ffi::sqlite3_file $(, $arg: $ty)*) -> c_int {
            let (real, m) = inner(f);
            match m.$field {
                Some(x) => x(real $(, $arg)*),
                None => ffi::SQLITE_IOERR,
            }
        }
    };
}

forward!(close, xClose, () -> c_int);
forward!(read, xRead, (buf: *mut c_void, amt: c_int, off: i64) -> c_int);
forward!(write, xWrite, (buf: *const c_void, amt: c_int, off: i64) -> c_int);
forward!(truncate, xTruncate, (size: i64) -> c_int);
forward!(file_size, xFileSize, (size: *mut i64) -> c_int);
forward!(lock, xLock, (level: c_int) -> c_int);
forward!(unlock, xUnlock, (level: c_int) -> c_int);
forward!(check_reserved, xCheckReservedLock, (out: *mut c_int) -> c_int);
forward!(file_control, xFileControl, (op: c_int, arg: *mut c_void) -> c_int);
forward!(sector_size, xSectorSize, () -> c_int);
forward!(device_characteristics, xDeviceCharacteristics, () -> c_int);
forward!(shm_map, xShmMap, (page: c_int, size: c_int, extend: c_int, out: *mut *mut c_void) -> c_int);
forward!(shm_lock, xShmLock, (offset: c_int, n: c_int, flags: c_int) -> c_int);
forward!(shm_unmap, xShmUnmap, (delete: c_int) -> c_int);
forward!(fetch, xFetch, (off: i64, amt: c_int, out: *mut *mut c_void) -> c_int);
forward!(unfetch, xUnfetch, (off: i64, p: *mut c_void) -> c_int);

unsafe extern "C" fn sync(f: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    SYNCS.fetch_add(1, Ordering::Relaxed);
    let (real, m) = inner(f);
    match m.xSync {
        Some(x) => x(real, flags),
        None => ffi::SQLITE_IOERR,
    }
}

unsafe extern "C" fn shm_barrier(f: *mut ffi::sqlite3_file) {
    let (real, m) = inner(f);
    if let Some(x) = m.xShmBarrier {
        x(real)
    }
}

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(close),
    xRead: Some(read),
    xWrite: Some(write),
    xTruncate: Some(truncate),
    xSync: Some(sync),
    xFileSize: Some(file_size),
    xLock: Some(lock),
    xUnlock: Some(unlock),
    xCheckReservedLock: Some(check_reserved),
    xFileControl: Some(file_control),
    xSectorSize: Some(sector_size),
    xDeviceCharacteristics: Some(device_characteristics),
    xShmMap: Some(shm_map),
    xShmLock: Some(shm_lock),
    xShmBarrier: Some(shm_barrier),
    xShmUnmap: Some(shm_unmap),
    xFetch: Some(fetch),
    xUnfetch: Some(unfetch),
};
