//! Options shared by the subcommands: protocol and thread lists (workload options: [`crate::workloads`]).

use crate::UsageError;

/// Splits a comma-separated list.
pub fn split(list: &str) -> Vec<&str> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// Parses and checks a protocol list.
pub fn protocols(list: &str) -> Result<Vec<&'static ordo::protocols::ProtocolInfo>, UsageError> {
    let names = split(list);
    if names.is_empty() {
        return Err(UsageError("no protocol given (see `ordo list`)".into()));
    }
    names
        .into_iter()
        .map(|n| {
            ordo::protocols::info(n)
                .ok_or_else(|| UsageError(ordo::protocols::UnknownProtocol(n.into()).to_string()))
        })
        .collect()
}

/// Parses a thread-count list: positive integers.
pub fn threads(list: &str) -> Result<Vec<usize>, UsageError> {
    let items = split(list);
    if items.is_empty() {
        return Err(UsageError("no thread count given".into()));
    }
    items
        .into_iter()
        .map(|t| match t.parse::<usize>() {
            Ok(n) if (1..=1024).contains(&n) => Ok(n),
            _ => Err(UsageError(format!(
                "invalid thread count `{t}`: expected an integer from 1 to 1024"
            ))),
        })
        .collect()
}
