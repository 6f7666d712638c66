//! Isolation level names → Ordo protocols, in one table, and which protocols a spec can run on.
//!
//! | level              | protocol |
//! |--------------------|----------|
//! | read uncommitted   | `rc`     |
//! | read committed     | `rc`     |
//! | repeatable read    | `si`     |
//! | serializable       | `ssi`    |
//!
//! The multi-version protocols are PostgreSQL's own levels (`ssi` is its SERIALIZABLE, Cahill's
//! SSI). Should a level's protocol not be registered, the level runs serializable on [`FALLBACK`]
//! (2PL with deadlock detection: it blocks like PostgreSQL does, so specs show `<waiting ...>`
//! markers), and the runner says so. A protocol chosen explicitly overrides the table; a spec
//! overlaps its sessions, so it runs only on a protocol that runs concurrent interactive
//! transactions ([`refusal`]).

use ordo::protocols::Interactive;

/// The protocol a level runs on when its own is not registered.
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

/// Why `protocol` cannot run what needs `needs` (a spec: [`Interactive::Concurrent`]; one SQL
/// session: [`Interactive::OneAtATime`]), as one line naming the protocols that can; `None` if it
/// can (or is unknown: the caller reports that).
pub fn refusal(protocol: &str, needs: Interactive) -> Option<String> {
    let info = ordo::protocols::info(protocol)?;
    let rank = |i: Interactive| match i {
        Interactive::No => 0,
        Interactive::OneAtATime => 1,
        Interactive::Concurrent => 2,
    };
    if rank(info.interactive) >= rank(needs) {
        return None;
    }
    let able: Vec<&str> = ordo::protocols::all()
        .into_iter()
        .filter(|i| rank(i.interactive) >= rank(needs))
        .map(|i| i.name)
        .collect();
    let what = match info.interactive {
        Interactive::OneAtATime => "runs one interactive transaction at a time",
        Interactive::No => "runs no interactive transactions (whole programs only)",
        Interactive::Concurrent => unreachable!("ranked above"),
    };
    let needed = match needs {
        Interactive::Concurrent => "a spec overlaps its sessions' transactions",
        _ => "SQL runs interactive transactions",
    };
    Some(format!(
        "`{protocol}` {what}, and {needed}: choose one of {}",
        able.join(", ")
    ))
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

    #[test]
    fn specs_refuse_protocols_that_cannot_overlap_sessions() {
        assert_eq!(refusal("ssi", Interactive::Concurrent), None);
        assert_eq!(
            refusal("vll", Interactive::OneAtATime),
            None,
            "one SQL session runs"
        );
        let why = refusal("vll", Interactive::Concurrent).expect("vll cannot overlap sessions");
        assert!(
            why.starts_with("`vll` runs one interactive transaction at a time")
                && why.contains("2pl-detect")
                && !why.contains("calvin"),
            "{why}"
        );
        assert_eq!(why.lines().count(), 1);
        assert_eq!(refusal("no-such-protocol", Interactive::Concurrent), None);
        assert_eq!(FALLBACK, "2pl-detect");
        assert_eq!(
            ordo::protocols::info(FALLBACK).map(|i| i.interactive),
            Some(Interactive::Concurrent),
            "the fallback runs specs"
        );
    }
}
