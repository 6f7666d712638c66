//! Isolation level names → Ordo protocols, in one table.
//!
//! | level              | protocol | until it is registered                     |
//! |--------------------|----------|--------------------------------------------|
//! | read uncommitted   | `rc`     | [`FALLBACK`]                               |
//! | read committed     | `rc`     | [`FALLBACK`]                               |
//! | repeatable read    | `si`     | [`FALLBACK`]                               |
//! | serializable       | `ssi`    | [`FALLBACK`]                               |
//!
//! Until the multi-version protocols exist, every level runs serializable on [`FALLBACK`] (2PL with
//! deadlock detection: it blocks like PostgreSQL does, so specs show `<waiting ...>` markers), and the
//! runner says so. A protocol chosen explicitly overrides the table.

/// The protocol every level runs on while its own is missing.
pub const FALLBACK: &str = "2pl-detect";

/// `(level name, protocol)`.
pub const LEVELS: [(&str, &str); 4] = [
    ("read uncommitted", "rc"),
    ("read committed", "rc"),
    ("repeatable read", "si"),
    ("serializable", "ssi"),
];

/// The strongest isolation level named in `text` (PostgreSQL's default, read committed, if none).
pub fn level_in(text: &str) -> &'static str {
    let t = text
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    LEVELS
        .iter()
        .rev()
        .find(|(l, _)| t.contains(&format!("isolation level {l}")))
        .map_or("read committed", |(l, _)| l)
}

/// The protocol for `level`, and a note when it falls back.
pub fn protocol_for(level: &str) -> (&'static str, Option<String>) {
    let want = LEVELS
        .iter()
        .find(|(l, _)| *l == level)
        .map_or("ssi", |(_, p)| p);
    if ordo::protocols::info(want).is_some() {
        (want, None)
    } else {
        (
            FALLBACK,
            Some(format!(
                "{level} maps to `{want}`, which is not registered yet: running serializable on `{FALLBACK}`"
            )),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strongest_level_wins_and_missing_protocols_fall_back() {
        assert_eq!(
            level_in("BEGIN ISOLATION LEVEL Serializable;"),
            "serializable"
        );
        assert_eq!(
            level_in("set transaction isolation level repeatable read"),
            "repeatable read"
        );
        assert_eq!(level_in("BEGIN;"), "read committed");
        let (p, note) = protocol_for("serializable");
        assert!(ordo::protocols::info(p).is_some());
        assert_eq!(note.is_some(), ordo::protocols::info("ssi").is_none());
    }
}
