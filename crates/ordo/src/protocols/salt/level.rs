//! Table 3.1: the isolation level of ACID transactions, as which operations take **long-term**
//! locks (the set 𝓛: held to the end of the transaction — of the alkaline subtransaction, for an
//! alkaline lock) and which take **short-term** ones (𝓢 minus 𝓛: released once the operation is
//! done). An operation type in neither takes no lock at all.
//!
//! ```text
//!   level              𝓛          𝓢           read    range read (gap)   write
//!   read uncommitted   W          W           none    none               long
//!   read committed     W          R, W        short   none               long
//!   repeatable read    R, W       R, W        long    none               long
//!   serializable       R, RR, W   R, RR, W    long    long               long
//! ```
//!
//! A scan reads each entry it passes (R) and, at serializable only, also locks the gaps between
//! them through next-key locking (RR: the entry after the range, or the supremum); an insert takes
//! the next-key write locks only at serializable, where someone may hold a gap.
//!
//! The same durations apply to BASE transactions' alkaline locks (§3.3: "alkaline locks can be
//! either long-term or short-term, depending on the operation type"); a long-term alkaline lock
//! becomes saline at the end of its subtransaction and is held to the end of the BASE transaction.

use crate::options::{OptionSpec, ValueKind};
use crate::protocols::ProtocolConfig;

/// `--salt-level`: see [`Level`].
pub const LEVEL_KNOB: OptionSpec = OptionSpec::new(
    "salt-level",
    "LEVEL",
    ValueKind::Choice(&["ru", "rc", "rr", "ser"]),
    "salt, salt-local, acid-2pl: the isolation level of ACID transactions (and the lock durations \
     of alkaline ones), Table 3.1: ru, rc, rr or ser. The thesis evaluates rc, the default.",
)
.default("rc");

/// How long an operation's lock is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// No lock.
    None,
    /// Released once the operation is done.
    Short,
    /// Held to the end of the (sub)transaction.
    Long,
}

/// An isolation level of Table 3.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Level {
    ReadUncommitted,
    #[default]
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

impl Level {
    /// The level named `text` (`ru`, `rc`, `rr`, `ser`).
    pub fn parse(text: &str) -> Option<Level> {
        Some(match text {
            "ru" => Level::ReadUncommitted,
            "rc" => Level::ReadCommitted,
            "rr" => Level::RepeatableRead,
            "ser" => Level::Serializable,
            _ => return None,
        })
    }

    /// The level of `config` ([`LEVEL_KNOB`], `rc` by default; the knob's declaration admits
    /// nothing else).
    pub fn of(config: &ProtocolConfig) -> Level {
        let text = config
            .knobs
            .text(&LEVEL_KNOB)
            .ok()
            .flatten()
            .unwrap_or_else(|| "rc".into());
        Level::parse(&text)
            .unwrap_or_else(|| panic!("--salt-level takes ru, rc, rr or ser, not `{text}`"))
    }

    /// A point read's lock (and each entry a scan reads).
    #[inline]
    pub fn read(self) -> Hold {
        match self {
            Level::ReadUncommitted => Hold::None,
            Level::ReadCommitted => Hold::Short,
            Level::RepeatableRead | Level::Serializable => Hold::Long,
        }
    }

    /// A range read's gap locks (next-key locking).
    #[inline]
    pub fn range_read(self) -> Hold {
        match self {
            Level::Serializable => Hold::Long,
            _ => Hold::None,
        }
    }

    /// A write's lock: long-term at every level.
    #[inline]
    pub fn write(self) -> Hold {
        Hold::Long
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Table 3.1, one test per level: the durations of read, range read and write locks.
    #[test]
    fn table_3_1_read_uncommitted() {
        let l = Level::parse("ru").unwrap();
        assert_eq!(
            (l.read(), l.range_read(), l.write()),
            (Hold::None, Hold::None, Hold::Long)
        );
    }

    #[test]
    fn table_3_1_read_committed() {
        let l = Level::parse("rc").unwrap();
        assert_eq!(l, Level::default(), "the thesis's level is the default");
        assert_eq!(
            (l.read(), l.range_read(), l.write()),
            (Hold::Short, Hold::None, Hold::Long)
        );
    }

    #[test]
    fn table_3_1_repeatable_read() {
        let l = Level::parse("rr").unwrap();
        assert_eq!(
            (l.read(), l.range_read(), l.write()),
            (Hold::Long, Hold::None, Hold::Long)
        );
    }

    #[test]
    fn table_3_1_serializable() {
        let l = Level::parse("ser").unwrap();
        assert_eq!(
            (l.read(), l.range_read(), l.write()),
            (Hold::Long, Hold::Long, Hold::Long)
        );
    }

    #[test]
    fn the_level_knob_defaults_to_rc_and_reads_each_name() {
        assert_eq!(Level::of(&ProtocolConfig::default()), Level::ReadCommitted);
        let c = ProtocolConfig::default()
            .with_knob(&LEVEL_KNOB, "ser")
            .unwrap();
        assert_eq!(Level::of(&c), Level::Serializable);
        assert_eq!(Level::parse("snapshot"), None);
    }
}
