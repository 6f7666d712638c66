//! `ordo list`: the protocols, with their knobs, and the workloads, with their options.

use ordo::options::OptionSpec;
use ordo_workloads::catalog::CATALOG;

/// `--name`, with `[,…]` if a list sweeps it.
fn option(spec: &OptionSpec) -> String {
    let sweep = if spec.sweep { "[,…]" } else { "" };
    format!("--{}{sweep}", spec.name)
}

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
        if !p.knobs.is_empty() {
            let knobs: Vec<String> = p
                .knobs
                .iter()
                .map(|k| format!("--{} {}", k.name, k.default.unwrap_or("-")))
                .collect();
            println!("  {:<w$} knobs: {}", "", knobs.join(", "));
        }
    }
    println!("workloads:");
    for e in CATALOG {
        println!("  {:<w$} {}  [{}]", e.name, e.summary, e.source);
        let options: Vec<String> = e.options.iter().map(|o| option(o)).collect();
        println!("  {:<w$} options: {}", "", options.join(" "));
    }
    println!("(knobs with their defaults; [,…]: a list is a sweep in `ordo bench`; `ordo bench --help` explains each)");
}
