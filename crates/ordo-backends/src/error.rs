//! The crate's one error type. A backend that is not running or refuses the connection is
//! [`Error::Unavailable`], whose one-line message names the backend and how to start it; an abort
//! the engine or the lock manager asks the caller to retry is [`Error::Retry`]; a transaction that
//! fails by its own logic (TATP's insert of a call forwarding that exists) is [`Error::UserAbort`].

/// Why a retryable abort happened (the row's `aborts` map counts them by these names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Retry {
    /// DIBS's lock wait ran past its timeout plus jitter (§3.1: a possible deadlock).
    LockTimeout,
    /// The engine found a deadlock (MariaDB 1213, PostgreSQL 40P01).
    Deadlock,
    /// The engine's serializable mode refused to commit (PostgreSQL 40001).
    Serialization,
    /// The engine's own lock wait timed out (SQLite `SQLITE_BUSY`, MariaDB 1205, PostgreSQL 55P03).
    Busy,
}

impl Retry {
    pub const ALL: [Retry; 4] = [
        Retry::LockTimeout,
        Retry::Deadlock,
        Retry::Serialization,
        Retry::Busy,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Retry::LockTimeout => "dibs_timeout",
            Retry::Deadlock => "deadlock",
            Retry::Serialization => "serialization",
            Retry::Busy => "busy",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server cannot be reached: not running, refusing, or gone mid-run.
    #[error("{backend}: cannot reach the server ({detail}); start it with {hint}")]
    Unavailable {
        backend: &'static str,
        detail: String,
        hint: &'static str,
    },
    /// An abort to answer by rolling back and running the transaction again.
    #[error("{backend}: {} abort: {detail}", .why.name())]
    Retry {
        backend: &'static str,
        why: Retry,
        detail: String,
    },
    /// The transaction failed by its own logic; roll it back, do not retry it.
    #[error("the transaction rolled itself back: {0}")]
    UserAbort(&'static str),
    /// Anything else the engine reported: a bug in a statement or a broken server.
    #[error("{backend}: {detail}")]
    Engine {
        backend: &'static str,
        detail: String,
    },
    /// A malformed request: bad option values, a predicate the lock manager refuses.
    #[error("{0}")]
    Input(String),
}

impl Error {
    /// Whether the caller should roll back and run the transaction again.
    pub fn retry(&self) -> Option<Retry> {
        match self {
            Error::Retry { why, .. } => Some(*why),
            _ => None,
        }
    }

    pub fn engine(backend: &'static str, detail: impl std::fmt::Display) -> Self {
        Error::Engine {
            backend,
            detail: detail.to_string(),
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
