//! `ordo analyze` as a user runs it: Callas's reading of TPC-C with the thesis's groups, and bad
//! input refused.

use std::process::{Command, Output};

fn ordo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ordo"))
        .args(args)
        .output()
        .expect("run ordo")
}

/// New-Order and Payment in one group: the district counter is the first rank, the YTD columns
/// only commute, New-Order's inserts need no rank, and New-Order is chopped into stages.
#[test]
fn tpcc_with_the_thesis_groups() {
    let o = ordo(&[
        "analyze",
        "-w",
        "tpcc",
        "--tiny",
        "--warehouses",
        "1",
        "--txns",
        "400",
        "--callas-groups",
        "NewOrder,Payment/Delivery",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        out.contains("group 0 (pipelined): NewOrder, Payment"),
        "{out}"
    );
    assert!(out.contains("  0  district.d_next_o_id"), "{out}");
    assert!(out.contains("w_ytd (only commuting writes)"), "{out}");
    assert!(out.contains("(only inserts (unique keys))"), "{out}");
    let new_order = out
        .lines()
        .find(|l| l.trim_start().starts_with("NewOrder:"))
        .expect("NewOrder's stages");
    assert!(new_order.matches('|').count() >= 2, "{new_order}");
    assert!(
        out.contains("(unpipelined: each transaction one stage): OrderStatus, StockLevel"),
        "{out}"
    );
}

#[test]
fn bad_input_is_refused_in_one_line() {
    for args in [
        &["analyze", "-w", "nosuch"][..],
        &["analyze", "-w", "tpcc", "--txns", "0"][..],
        &["analyze", "-w", "tpcc", "--callas-analysis", "rows"][..],
    ] {
        let o = ordo(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
