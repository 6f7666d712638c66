//! `ordo analyze` as a user runs it: Callas's reading of TPC-C with the thesis's groups, the
//! SC-cycle chopping of TPC-C and ticketing (and `sc-chopping` verified), and bad input refused.

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

/// The line of `out` that starts (after indentation) with `prefix`.
fn line<'a>(out: &'a str, prefix: &str) -> &'a str {
    out.lines()
        .find(|l| l.trim_start().starts_with(prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` in {out}"))
        .trim()
}

/// SC-cycle chopping of New-Order and Payment (`--mix pwv`) over the whole workload, at table and
/// at column grain: only the conflict-free pieces come apart (the item reads with the rollback,
/// the inserts, Payment's customer lookup, and at column grain New-Order's warehouse and customer
/// reads, of columns nobody writes); what writes district, stock, warehouse or customer is tied
/// through a second instance of the same type.
#[test]
fn tpcc_new_order_and_payment_sc_chopping() {
    for (grain, new_order) in [
        ("table", "NewOrder: [0] | [1 2 3] | [4]"),
        ("column", "NewOrder: [0] | [1] | [2 3] | [4]"),
    ] {
        let o = ordo(&[
            "analyze",
            "-w",
            "tpcc",
            "--tiny",
            "--warehouses",
            "1",
            "--mix",
            "pwv",
            "--txns",
            "400",
            "--chopping",
            "sc",
            "--sc-analysis",
            grain,
        ]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(line(&out, "NewOrder:"), new_order, "{grain}");
        assert_eq!(
            line(&out, "Payment:"),
            "Payment: [2] | [0 1 3] | [4]",
            "{grain}"
        );
        assert!(out.contains("piece 3 C-edges: NewOrder'"), "{grain}: {out}");
    }
}

/// Ticketing's CreateOrder cannot be chopped over the whole workload — every piece meets another
/// type that ties it to the others — nor in a group of its own, where its pieces meet through a
/// second CreateOrder but for the order insert, which cannot come apart either: the pieces after
/// it depend on it and the chops must run in order.
#[test]
fn ticketing_create_order_is_not_chopped_whole_or_grouped() {
    for groups in [None, Some("CreateOrder")] {
        let mut args = vec![
            "analyze",
            "-w",
            "ticketing",
            "--txns",
            "300",
            "--chopping",
            "sc",
        ];
        if let Some(g) = groups {
            args.extend(["--callas-groups", g]);
        }
        let o = ordo(&args);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(
            line(&out, "CreateOrder:"),
            "CreateOrder: [0 1 2 3 4]",
            "{groups:?}"
        );
        if groups.is_some() {
            assert!(
                out.contains("finest, before rollback safety: [0 1 2 4] | [3]"),
                "{out}"
            );
        }
    }
}

/// `ordo verify` on contended TPC-C and YCSB: `sc-chopping` keeps its read-committed promise,
/// `sc-chopping-ser` is serializable (and TPC-C's consistency conditions hold).
#[test]
fn sc_chopping_verifies_on_tpcc_and_ycsb() {
    for w in [
        &["-w", "tpcc", "--tiny", "--warehouses", "1"][..],
        &["-w", "ycsb"][..],
    ] {
        let mut args = vec!["verify"];
        args.extend_from_slice(w);
        args.extend([
            "-p",
            "sc-chopping,sc-chopping-ser",
            "-t",
            "4",
            "--txns",
            "600",
        ]);
        let o = ordo(&args);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{w:?}: {out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            out.contains("sc-chopping-ser") && out.contains("serializable, no anomalies"),
            "{out}"
        );
        assert_eq!(out.matches("=> ok").count(), 2, "{w:?}: {out}");
    }
}

#[test]
fn bad_input_is_refused_in_one_line() {
    for args in [
        &["analyze", "-w", "nosuch"][..],
        &["analyze", "-w", "tpcc", "--txns", "0"][..],
        &["analyze", "-w", "tpcc", "--callas-analysis", "rows"][..],
        &["analyze", "-w", "tpcc", "--chopping", "rows"][..],
    ] {
        let o = ordo(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
