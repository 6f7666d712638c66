//! `--partitions` and `--multi-partition` (see the module doc's **Partitions**).

use super::options::{HOT_PER_TXN, HOT_ROWS, MULTI_PARTITION, PARTITIONS, ROWS};
use super::*;
use crate::Purpose;
use ordo::options::{OptionSpec, Settings};
use ordo::protocols::kit::partition_map::PartitionMap;
use ordo::protocols::partitioned::partition_of;
use ordo::protocols::partitioned::parts::PartSet;
use std::collections::BTreeSet;

fn partitioned(rows: u64, partitions: u32, multi_partition_pct: f64) -> Ycsb {
    Ycsb::new(YcsbConfig {
        rows,
        partitioning: Some(Partitioning {
            partitions,
            multi_partition_pct,
        }),
        ..YcsbConfig::default()
    })
    .unwrap()
}

fn keys(p: &YcsbTxn) -> Vec<u64> {
    p.requests.iter().map(|r| r.key).collect()
}

/// A seeded generator's first two transactions: configuration, thread, seed, their keys and which
/// of their requests write (a bit each).
type Known = (YcsbConfig, u32, u64, [[u64; 16]; 2], [usize; 2]);

/// Without `--partitions` a seeded generator draws exactly what it drew before the option existed
/// (keys and read/write flags computed with the generator of commit 7fffcc7).
#[test]
fn off_by_default_the_request_stream_is_the_one_before_partitions_existed() {
    let known: [Known; 2] = [
        (
            YcsbConfig {
                rows: 1000,
                ..YcsbConfig::default()
            },
            0,
            42,
            [
                [
                    9, 205, 186, 792, 164, 308, 456, 2, 74, 183, 975, 418, 632, 969, 993, 599,
                ],
                [
                    575, 227, 0, 176, 23, 421, 910, 60, 766, 259, 17, 921, 285, 136, 45, 64,
                ],
            ],
            [0b0000_0110_0000_0000, 0b0000_0000_1000_0000],
        ),
        (
            YcsbConfig {
                rows: 100_000,
                theta: 0.9,
                ..YcsbConfig::default()
            },
            1,
            7,
            [
                [
                    26610, 22, 6080, 99083, 4191, 0, 343, 686, 29972, 5255, 18, 447, 54362, 37, 59,
                    78542,
                ],
                [
                    11, 82629, 37592, 269, 4, 19, 1774, 2432, 64, 13222, 8415, 1802, 3, 98985,
                    17022, 1,
                ],
            ],
            [0b0000_1000_1000_0000, 0b1001_0000_0000_0010],
        ),
    ];
    for (cfg, thread, seed, want_keys, want_writes) in known {
        assert_eq!(cfg.partitioning, None, "off by default");
        let w = Ycsb::new(cfg).unwrap();
        assert!(w.params().get("partitions").is_none(), "not recorded");
        let (mut g, mut p) = (w.generator(thread, seed), w.program());
        for (want, writes) in want_keys.iter().zip(want_writes) {
            w.next(&mut g, &mut p);
            assert_eq!(&keys(&p)[..], want);
            let got = p
                .requests
                .iter()
                .enumerate()
                .fold(0, |m, (i, r)| m | (usize::from(r.write) << i));
            assert_eq!(got, writes, "which requests write");
        }
    }
    // And the default settings are off.
    let w = Ycsb::from_settings(&Settings::new(), Purpose::Bench).unwrap();
    assert_eq!(w.config().partitioning, None);
}

/// Worker `t`'s single-partition transactions take all their (distinct) keys from partition
/// `t % P`, the one `hstore` and the `vll-partitioned` family hold them in.
#[test]
fn a_single_partition_transaction_keeps_to_its_workers_home_partition() {
    let parts = 4;
    let w = partitioned(10_000, parts, 0.0);
    for t in 0..6 {
        let (mut g, mut p) = (w.generator(t, 3), w.program());
        for _ in 0..500 {
            w.next(&mut g, &mut p);
            let ks = keys(&p);
            assert_eq!(ks.len(), 16);
            assert_eq!(ks.iter().collect::<BTreeSet<_>>().len(), 16, "distinct");
            for &k in &ks {
                assert!(k < 10_000);
                assert_eq!(w.partition_of(k), Some(t % parts), "worker {t}, key {k}");
                assert_eq!(partition_of(k, parts as u64), (t % parts) as u64);
            }
        }
    }
}

/// With `--partitions 2 -t 2`, `hstore` (its [`PartSet`] of a transaction's declarations) runs a
/// single-partition transaction in exactly its worker's partition, a multi-partition one in both.
#[test]
fn hstore_takes_one_partition_for_a_single_partition_transaction() {
    let w = partitioned(1_000, 2, 50.0);
    let mut db: Database<()> = Database::new();
    w.load(&mut db).unwrap();
    let (mut set, mut decl) = (PartSet::default(), Vec::new());
    let (mut single, mut multi) = (0, 0);
    for t in 0..2 {
        let (mut g, mut p) = (w.generator(t, 1), w.program());
        for _ in 0..400 {
            w.next(&mut g, &mut p);
            decl.clear();
            for piece in 0..p.pieces() {
                p.declare(piece, &mut decl);
            }
            set.of(&db, &decl, PartitionMap::new(2, p.partitioning()))
                .unwrap();
            let spans: BTreeSet<u32> = keys(&p).iter().map(|&k| k as u32 % 2).collect();
            if spans.len() == 1 {
                assert_eq!(set.list, [t], "worker {t}'s partition");
                single += 1;
            } else {
                assert_eq!(set.list, [0, 1]);
                multi += 1;
            }
        }
    }
    assert!(
        single > 300 && multi > 300,
        "{single} single, {multi} multi"
    );
}

/// About PCT percent of transactions touch two partitions: their home and one other, half their
/// requests in each, every other partition reached.
#[test]
fn the_multi_partition_share_is_about_pct() {
    let parts = 4;
    for pct in [0.0, 10.0, 30.0, 100.0] {
        let w = partitioned(40_000, parts, pct);
        let n = 4_000;
        let mut multi = 0;
        let mut others = BTreeSet::new();
        let t = 2;
        let (mut g, mut p) = (w.generator(t, 17), w.program());
        for _ in 0..n {
            w.next(&mut g, &mut p);
            let ks = keys(&p);
            assert_eq!(ks.iter().collect::<BTreeSet<_>>().len(), 16, "distinct");
            let touched: BTreeSet<u32> = ks.iter().map(|&k| w.partition_of(k).unwrap()).collect();
            assert!(touched.contains(&t), "homed at worker {t}'s partition");
            assert!(touched.len() <= 2);
            if touched.len() == 2 {
                multi += 1;
                let home = ks.iter().filter(|&&k| w.partition_of(k) == Some(t)).count();
                assert_eq!(home, 8, "alternating requests");
                others.extend(touched.into_iter().filter(|&q| q != t));
            }
        }
        let share = 100.0 * multi as f64 / n as f64;
        assert!(
            (share - pct).abs() < 2.5,
            "{share}% multi-partition for {pct}%"
        );
        if pct > 0.0 {
            assert_eq!(others, [0, 1, 3].into_iter().collect(), "{pct}%");
        }
    }
}

/// Within a partition the keys keep the Zipfian skew: its smallest key (rank 0) is the hottest,
/// as key 0 is without partitions.
#[test]
fn keys_keep_their_zipfian_skew_within_the_partition() {
    let w = Ycsb::new(YcsbConfig {
        rows: 100_000,
        theta: 0.9,
        partitioning: Some(Partitioning {
            partitions: 2,
            multi_partition_pct: 0.0,
        }),
        ..YcsbConfig::default()
    })
    .unwrap();
    let (mut g, mut p) = (w.generator(1, 5), w.program());
    let mut counts = std::collections::BTreeMap::<u64, usize>::new();
    for _ in 0..2_000 {
        w.next(&mut g, &mut p);
        for k in keys(&p) {
            *counts.entry(k).or_default() += 1;
        }
    }
    let hottest = counts.iter().max_by_key(|(_, &c)| c).unwrap();
    assert_eq!(*hottest.0, 1, "rank 0 of partition 1");
    // Skewed: its 100 lowest ranks of 50,000 take a fifth of the requests or more (uniform keys
    // would give them 0.2%; 31% here).
    let top: usize = (0..100)
        .map(|r| counts.get(&(r * 2 + 1)).unwrap_or(&0))
        .sum();
    assert!(top > 2_000 * 16 / 5, "top 100 ranks: {top}");
}

fn given(options: &[(&OptionSpec, &str)]) -> Settings {
    options.iter().fold(Settings::new(), |s, (spec, text)| {
        s.with(spec, text).expect("a valid value")
    })
}

fn error(options: &[(&OptionSpec, &str)]) -> String {
    match Ycsb::from_settings(&given(options), Purpose::Bench) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("expected an error for {options:?}"),
    }
}

#[test]
fn bad_partition_options_are_clear_errors() {
    let ok = Ycsb::from_settings(
        &given(&[(&PARTITIONS, "2"), (&MULTI_PARTITION, "20")]),
        Purpose::Bench,
    )
    .unwrap();
    assert_eq!(
        ok.config().partitioning,
        Some(Partitioning {
            partitions: 2,
            multi_partition_pct: 20.0
        })
    );
    let w = Ycsb::from_settings(&given(&[(&PARTITIONS, "2")]), Purpose::Verify).unwrap();
    assert_eq!(
        w.config().partitioning.unwrap().multi_partition_pct,
        0.0,
        "0% multi-partition by default"
    );
    assert_eq!(w.params()["partitions"], 2);
    assert_eq!(
        error(&[(&PARTITIONS, "2000"), (&ROWS, "1000")]),
        "--partitions must be between 1 and --rows (1000), got 2000"
    );
    let e = error(&[(&PARTITIONS, "100"), (&ROWS, "1000")]);
    assert!(
        e.starts_with("--ops (16) cannot exceed the rows of a partition, --rows / --partitions (1000 / 100 = 10)"),
        "{e}"
    );
    assert_eq!(
        error(&[(&MULTI_PARTITION, "10")]),
        "--multi-partition needs --partitions"
    );
    let e = error(&[(&PARTITIONS, "1"), (&MULTI_PARTITION, "10")]);
    assert!(e.contains("needs --partitions of 2 or more"), "{e}");
    let e = error(&[(&PARTITIONS, "2"), (&HOT_ROWS, "10"), (&HOT_PER_TXN, "1")]);
    assert!(e.contains("hot set"), "{e}");
    // PCT > 100 (or < 0) and P = 0 are refused as they are read.
    for bad in ["101", "-1", "nan"] {
        let e = MULTI_PARTITION.parse(bad).unwrap_err().0;
        assert!(e.contains("--multi-partition"), "{bad}: {e}");
    }
    assert!(PARTITIONS.parse("0").is_err());
    // And a configuration built without the options is checked the same way, without a panic.
    for (partitions, pct) in [(0, 0.0), (2, 100.5), (2, -1.0), (2, f64::NAN), (1_001, 0.0)] {
        let cfg = YcsbConfig {
            rows: 1_000,
            ops: 4,
            partitioning: Some(Partitioning {
                partitions,
                multi_partition_pct: pct,
            }),
            ..YcsbConfig::default()
        };
        assert!(Ycsb::new(cfg).is_err(), "{partitions} partitions, {pct}%");
    }
}
