//! `ordo list`.

use crate::workloads::WORKLOADS;

pub fn run() {
    println!("protocols:");
    for p in ordo::protocols::all() {
        println!(
            "  {:<19} {:<18} {}  [{}]",
            p.name,
            format!("{:?}", p.isolation),
            p.summary,
            p.paper
        );
    }
    println!("workloads:");
    for (name, summary, paper) in WORKLOADS {
        println!("  {name:<19} {summary}  [{paper}]");
    }
}
