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

/// The search index's triggers (migrations 0019 and 0021): dropping them leaves a database
/// that writes messages exactly as before the index existed, for "with and without" rows.
pub const SEARCH_TRIGGERS: [&str; 4] =
    ["message_search_insert", "message_search_update", "message_search_update_cjk", "message_search_delete"];

/// Drops the search index's triggers from `store`'s database (see [`SEARCH_TRIGGERS`]).
pub async fn drop_search_index(store: &store::Store) -> anyhow::Result<()> {
    for trigger in SEARCH_TRIGGERS {
        store.write_raw(sqlx::query(sqlx::AssertSqlSafe(format!("DROP TRIGGER {trigger}")))).await?;
    }
    Ok(())
}
