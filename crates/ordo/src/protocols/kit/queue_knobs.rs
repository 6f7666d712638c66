//! The knobs of the loops built on a TxnQueue ([`super::txn_queue`]): how many blocked transactions
//! stop admission, how many a worker admits at once, how large SCA's bit arrays are. Declared once
//! here because three families read them: the VLL family (`vll`, `vll-sca`, `vll-arrayed`, `vllr`,
//! `vllr-sca`), deterministic VLL (`calvin-vll`) and the partitioned VLLs (`vll-partitioned*`); each
//! protocol lists the ones it reads in its `ProtocolInfo::knobs`.

use crate::options::{OptionSpec, ValueKind};
use crate::protocols::ProtocolConfig;

/// Default threshold of blocked transactions above which no new transaction is admitted.
pub const DEFAULT_BLOCKED_LIMIT: usize = 16;

/// Default largest admission batch (requests admitted in one critical section while nothing blocks).
/// On `vll-micro` at 2 threads batches of 2 to 8 were equally fast (16 no faster) and latency grows
/// with the batch; 4 leaves room for more workers on one latch.
pub const DEFAULT_MAX_BATCH: usize = 4;

/// `--vll-blocked-limit`: see [`VllConfig::blocked_limit`].
pub const BLOCKED_LIMIT_KNOB: OptionSpec = OptionSpec::new(
    "vll-blocked-limit",
    "N",
    ValueKind::Int { min: 1, max: 4096 },
    "VLL family, calvin-vll, vll-partitioned family: no new transaction is admitted while this many \
     are blocked (the paper tunes it per workload). It is the most: a worker halves its own threshold \
     when a dependent transaction's reconnaissance went stale while it waited, and grows it back as \
     transactions complete.",
)
.default("16");

/// `--vll-batch`: see [`VllConfig::max_batch`].
pub const BATCH_KNOB: OptionSpec = OptionSpec::new(
    "vll-batch",
    "N",
    ValueKind::Int { min: 1, max: 1024 },
    "VLL family: the most transactions a worker admits in one critical section while none blocks \
     (1 is the paper's one at a time; a batch also stops at 8 lock requests per member allowed, 32 \
     at the default).",
)
.default("4");

/// `--vll-sca-bits`: see [`VllConfig::sca_bits`].
pub const SCA_BITS_KNOB: OptionSpec = OptionSpec::new(
    "vll-sca-bits",
    "BITS",
    ValueKind::Int {
        min: 64,
        max: 1 << 27,
    },
    "vll-sca, vllr-sca, vll-partitioned-sca, calvin-vll: bits in each of SCA's bit arrays (the \
     paper's 819200 = 100 kB each by default). Fewer bits stay in L1 and move fewer cache lines \
     between scanning workers; more hash collisions only make SCA miss runnable transactions, never \
     pick a conflicting one.",
)
.default("819200");

/// Knobs of the VLL family's main loop (`vll`, `vll-sca`, `vll-arrayed`, `vllr`, `vllr-sca`), read
/// from [`ProtocolConfig::knobs`] ([`BLOCKED_LIMIT_KNOB`], [`BATCH_KNOB`], [`SCA_BITS_KNOB`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VllConfig {
    /// Admission stops while this many transactions are blocked in the TxnQueue (the most: a worker
    /// whose dependent transactions' reconnaissance goes stale lowers its own threshold, see
    /// [`super::aimd`]).
    pub blocked_limit: usize,
    /// Largest admission batch of a worker's main loop (1: one transaction per critical section, as in
    /// Fig. 1).
    pub max_batch: usize,
    /// `vll-sca`: bits in each of SCA's arrays D_X and D_S (the paper's 819,200 by default,
    /// [`super::sca::SCA_BITS`]: 100 kB each, both in a 256 kB L2). Fewer bits keep the arrays in L1 and
    /// move fewer lines between the cores whose workers take turns scanning, at the price of more
    /// hash collisions (false negatives only, never a conflicting find).
    pub sca_bits: u32,
}

impl Default for VllConfig {
    fn default() -> Self {
        VllConfig::of(&ProtocolConfig::default())
    }
}

impl VllConfig {
    /// The knobs' values in `config` (their declared defaults where not given).
    pub fn of(config: &ProtocolConfig) -> Self {
        // Settings hold only values parsed against these declarations (one whole number in range,
        // since none of them sweeps), and every declared default parses: nothing here can fail.
        let knob = |spec: &OptionSpec| {
            config
                .knobs
                .int_or_default(spec)
                .unwrap_or_else(|e| unreachable!("a checked VLL knob: {e}"))
        };
        VllConfig {
            blocked_limit: knob(&BLOCKED_LIMIT_KNOB) as usize,
            max_batch: knob(&BATCH_KNOB) as usize,
            sca_bits: knob(&SCA_BITS_KNOB) as u32,
        }
    }
}
