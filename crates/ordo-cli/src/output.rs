//! What the commands write: the machine each JSON row records, and files written when a command ends
//! (`bench --json`, `verify --history`), checked when it starts:
//! a path that cannot be written fails at once, not after minutes of benchmarking, and a file that
//! exists already is replaced only by a complete new one.

use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// The machine a result was measured on, as every JSON row records it.
pub fn machine() -> serde_json::Value {
    serde_json::json!({
        "cores": std::thread::available_parallelism().map_or(1, |n| n.get()),
        "os": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
    })
}

/// A file to be written later: its contents go to a hidden sibling, created now (which proves the
/// directory writable), and are renamed over the path by [`PendingFile::finish`]. Dropped
/// unfinished (the command failed), the sibling is removed and the path left as it was.
pub struct PendingFile {
    path: PathBuf,
    partial: PathBuf,
    done: bool,
}

impl PendingFile {
    pub fn prepare(path: &Path) -> Result<Self> {
        let cannot = |why: String| Error::CannotWrite {
            path: path.to_path_buf(),
            why,
        };
        let name = path
            .file_name()
            .ok_or_else(|| cannot("not a file name".into()))?;
        if path.is_dir() {
            return Err(cannot("it is a directory".into()));
        }
        let partial = path.with_file_name(format!(".{}.partial", name.to_string_lossy()));
        std::fs::File::create(&partial).map_err(|e| cannot(e.to_string()))?;
        Ok(PendingFile {
            path: path.to_path_buf(),
            partial,
            done: false,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `text` and puts it in place.
    pub fn finish(mut self, text: &str) -> Result<()> {
        let failed = |source| Error::Write {
            path: self.path.clone(),
            source,
        };
        std::fs::write(&self.partial, text).map_err(failed)?;
        std::fs::rename(&self.partial, &self.path).map_err(failed)?;
        self.done = true;
        Ok(())
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_file_replaces_the_old_one_only_when_finished() {
        let dir = std::env::temp_dir().join(format!("ordo-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.json");
        std::fs::write(&path, "old").unwrap();
        // Abandoned: the old file stays and no partial one is left behind.
        drop(PendingFile::prepare(&path).unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        PendingFile::prepare(&path).unwrap().finish("new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        // Unwritable places fail at once.
        assert!(PendingFile::prepare(&dir.join("no-such-dir/r.json")).is_err());
        assert!(PendingFile::prepare(&dir).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
