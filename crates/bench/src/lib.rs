//! What the benchmark binaries share: machine facts and meters, medians, and the printed
//! table.
//!
//! - `colloquy-bench-streams` (`src/main.rs`): the stream pipeline end to end.
//! - `colloquy-bench-providers` (`src/bin/providers.rs`): wire-format decoding throughput.
//! - `colloquy-bench-search` (`src/bin/search.rs`): full-text search latency, index size
//!   and the index's cost per chunk checkpoint.

pub mod machine;
pub mod report;
pub mod stats;

/// The 1, 5 and 15 minute load averages from `/proc/loadavg`.
pub fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}
