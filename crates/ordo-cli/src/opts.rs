//! Arguments shared by the subcommands: protocol and thread lists, lists of numbers (workload
//! options and protocol knobs: [`crate::declared`]).

use crate::{Error, Result};

/// Splits a comma-separated list.
pub fn split(list: &str) -> Vec<&str> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// Parses a comma-separated list of numbers, each accepted by `ok`; `what` describes the range.
pub fn parse_list(flag: &str, s: &str, ok: fn(f64) -> bool, what: &str) -> Result<Vec<f64>> {
    let values = s
        .split(',')
        .map(|v| {
            let v = v.trim();
            match v.parse::<f64>() {
                Ok(x) if ok(x) => Ok(x),
                _ => Err(Error::InvalidInput(format!(
                    "--{flag} takes {what}, got `{v}`"
                ))),
            }
        })
        .collect::<Result<Vec<f64>>>()?;
    for (i, v) in values.iter().enumerate() {
        if values[..i].contains(v) {
            return Err(Error::InvalidInput(format!("--{flag} lists {v} twice")));
        }
    }
    Ok(values)
}

/// Parses and checks a protocol list.
pub fn protocols(list: &str) -> Result<Vec<&'static ordo::protocols::ProtocolInfo>> {
    let names = split(list);
    if names.is_empty() {
        return Err(Error::InvalidInput(
            "no protocol given (see `ordo list`)".into(),
        ));
    }
    names
        .into_iter()
        .map(|n| {
            ordo::protocols::info(n)
                .ok_or_else(|| ordo::protocols::UnknownProtocol(n.into()).into())
        })
        .collect()
}

/// Parses a thread-count list: positive integers.
pub fn threads(list: &str) -> Result<Vec<usize>> {
    let items = split(list);
    if items.is_empty() {
        return Err(Error::InvalidInput("no thread count given".into()));
    }
    items
        .into_iter()
        .map(|t| match t.parse::<usize>() {
            Ok(n) if (1..=1024).contains(&n) => Ok(n),
            _ => Err(Error::InvalidInput(format!(
                "invalid thread count `{t}`: expected an integer from 1 to 1024"
            ))),
        })
        .collect()
}
