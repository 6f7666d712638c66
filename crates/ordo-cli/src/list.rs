//! `ordo list`.

use crate::workloads::WORKLOADS;

pub fn run() {
    let w = crate::name_width();
    println!("protocols:");
    for p in ordo::protocols::all() {
        println!(
            "  {:<w$} {:<18} {}  [{}]",
            p.name,
            format!("{:?}", p.isolation),
            p.summary,
            p.paper
        );
    }
    println!("workloads:");
    for (name, summary, paper) in WORKLOADS {
        println!("  {name:<w$} {summary}  [{paper}]");
    }
}
