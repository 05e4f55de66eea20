//! Where the search index's triggers spend time on one streamed reply (a diagnostic for
//! `docs/benchmarks.md`, not part of `cargo xtask bench`).
//!
//! `cargo run --release -p colloquy-bench --example reply_index_cost`
//!
//! 1. Replays the writes the stream manager makes for the streams benchmark's two
//!    replies (`Store::insert_turn`, then `Store::write_checkpoints`: checkpoints while
//!    streaming, one final state) on a fresh database, with the index's triggers and
//!    without them, and prints the time of each kind of write.
//! 2. Takes the triggers' statements apart on the big reply's row: the searchable-text
//!    view, the CJK view's character test, inserting the text into `message_words` (with
//!    and without its prefix lists) and committing it, and the deletes.

use std::time::{Duration, Instant};

use anyhow::Result;
use colloquy_bench::machine::process_cpu;
use protocol::{MessageId, MessageRole, MessageStatus, ModelRef, PartState, ProviderId, TurnId, UiMessage, UiPart};
use sqlx::{Connection, SqliteConnection};
use store::{AssistantSlot, Checkpoint, NewTurn, Store};

const REPS: usize = 5;

/// Migration 0019's pattern for text with unspaced scripts.
const CJK_PATTERN: &str = "('*[' || char(0x0E00) || '-' || char(0x0EFF) || char(0x1000) || '-' || char(0x109F) || \
     char(0x1780) || '-' || char(0x17FF) || char(0x2E80) || '-' || char(0x9FFF) || char(0xAC00) || '-' || char(0xD7AF) || \
     char(0xF900) || '-' || char(0xFAFF) || char(0xFF66) || '-' || char(0xFF9F) || char(0x20000) || '-' || char(0x2FFFF) || ']*')";

/// One reply as the streams benchmark sends it: `chunks` words of 7 bytes, checkpointed
/// every `per_checkpoint` chunks (0: never, the reply ends before the first is due).
struct Reply {
    name: &'static str,
    chunks: usize,
    per_checkpoint: usize,
}

const REPLIES: [Reply; 2] = [
    Reply { name: "20,000 chunks back to back (140 KB)", chunks: 20_000, per_checkpoint: 0 },
    // Paced at one per ms, the benchmark's reply takes about 4.6 s (its wall time), so a
    // checkpoint 350 ms after the oldest unsaved chunk holds about 150 more.
    Reply { name: "2,000 chunks one per ms (14 KB)", chunks: 2_000, per_checkpoint: 150 },
];

fn text(chunks: usize) -> String {
    (0..chunks).map(|i| format!("w{:05} ", i % 100_000)).collect()
}

fn checkpoint(id: &MessageId, text: &str, status: MessageStatus) -> Checkpoint {
    let state = if status == MessageStatus::Streaming { PartState::Streaming } else { PartState::Done };
    Checkpoint {
        message_id: id.clone(),
        status,
        status_reason: None,
        message: UiMessage {
            id: id.to_string(),
            role: MessageRole::Assistant,
            parts: vec![UiPart::Text { text: text.to_owned(), state: Some(state) }],
            metadata: None,
        },
    }
}

#[derive(Default)]
struct Times {
    insert_turn: Vec<Duration>,
    first_checkpoint: Vec<Duration>,
    other_checkpoints: Vec<Duration>,
    final_write: Vec<Duration>,
    cpu_per_reply: Vec<Duration>,
}

fn median(samples: &[Duration]) -> f64 {
    let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e3).collect();
    ms.sort_by(f64::total_cmp);
    if ms.is_empty() { f64::NAN } else { ms[ms.len() / 2] }
}

fn total(samples: &[Duration]) -> f64 {
    samples.iter().map(Duration::as_secs_f64).sum::<f64>() * 1e3
}

async fn replay(reply: &Reply, with_index: bool) -> Result<Times> {
    let dir = tempfile::tempdir()?;
    let store = Store::open(&dir.path().join("colloquy.db")).await?;
    if !with_index {
        colloquy_bench::drop_search_index(&store).await?;
    }
    let model = ModelRef { provider_id: ProviderId("bench".into()), model: "scripted".into() };
    let text = text(reply.chunks);
    let mut times = Times::default();
    for rep in 0..=REPS {
        let topic = store.create_topic("bench", None).await?;
        let id = MessageId::new();
        let cpu = process_cpu();
        let started = Instant::now();
        store
            .insert_turn(&NewTurn {
                topic_id: topic.id,
                turn_id: TurnId::new(),
                user_message_id: MessageId::new(),
                user_parts: UiMessage::user_text("", "bench").parts,
                edit_of: None,
                assistants: vec![AssistantSlot {
                    message_id: id.clone(),
                    model: model.clone(),
                    metadata: serde_json::json!({}),
                }],
            })
            .await?;
        let insert_turn = started.elapsed();
        let mut checkpoints = Vec::new();
        if reply.per_checkpoint > 0 {
            for end in (reply.per_checkpoint..reply.chunks).step_by(reply.per_checkpoint) {
                let started = Instant::now();
                store.write_checkpoints(&[checkpoint(&id, &text[..end * 7], MessageStatus::Streaming)]).await?;
                checkpoints.push(started.elapsed());
            }
        }
        let started = Instant::now();
        store.write_checkpoints(&[checkpoint(&id, &text, MessageStatus::Success)]).await?;
        let final_write = started.elapsed();
        let cpu = process_cpu() - cpu;
        if rep == 0 {
            continue; // warm-up
        }
        times.insert_turn.push(insert_turn);
        if let Some((first, rest)) = checkpoints.split_first() {
            times.first_checkpoint.push(*first);
            times.other_checkpoints.extend_from_slice(rest);
        }
        times.final_write.push(final_write);
        times.cpu_per_reply.push(cpu);
    }
    store.close().await;
    Ok(times)
}

/// Median time of `statements` on `conn`, run `n` times, each in its own transaction
/// (committed when `commit`, else rolled back; the commit is timed too).
async fn time_statement(
    conn: &mut SqliteConnection,
    n: usize,
    commit: bool,
    mut statements: impl FnMut(usize) -> Vec<sqlx::query::Query<'static, sqlx::Sqlite, sqlx::sqlite::SqliteArguments>>,
) -> Result<(f64, f64)> {
    let (mut run, mut end) = (Vec::new(), Vec::new());
    for i in 0..n {
        let mut tx = conn.begin().await?;
        let started = Instant::now();
        for statement in statements(i) {
            statement.execute(&mut *tx).await?;
        }
        run.push(started.elapsed());
        let started = Instant::now();
        if commit {
            tx.commit().await?;
        } else {
            tx.rollback().await?;
        }
        end.push(started.elapsed());
    }
    Ok((median(&run), median(&end)))
}

async fn take_apart() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("colloquy.db");
    let store = Store::open(&path).await?;
    let model = ModelRef { provider_id: ProviderId("bench".into()), model: "scripted".into() };
    let topic = store.create_topic("bench", None).await?;
    let id = MessageId::new();
    store
        .insert_turn(&NewTurn {
            topic_id: topic.id,
            turn_id: TurnId::new(),
            user_message_id: MessageId::new(),
            user_parts: UiMessage::user_text("", "bench").parts,
            edit_of: None,
            assistants: vec![AssistantSlot { message_id: id.clone(), model, metadata: serde_json::json!({}) }],
        })
        .await?;
    let text = text(20_000);
    store.write_checkpoints(&[checkpoint(&id, &text, MessageStatus::Success)]).await?;
    store.close().await;

    let mut conn = SqliteConnection::connect(&format!("sqlite://{}", path.display())).await?;
    let rowid: i64 =
        sqlx::query_scalar("SELECT rowid FROM messages WHERE id = ?").bind(id.to_string()).fetch_one(&mut conn).await?;
    for ddl in [
        "CREATE VIRTUAL TABLE scratch_prefix USING fts5 (body, tokenize = 'unicode61 remove_diacritics 2', \
           prefix = '2 3', content = '', contentless_delete = 1)",
        "CREATE VIRTUAL TABLE scratch_plain USING fts5 (body, tokenize = 'unicode61 remove_diacritics 2', \
           content = '', contentless_delete = 1)",
        "CREATE VIRTUAL TABLE scratch_cjk USING fts5 (body, tokenize = 'trigram case_sensitive 0 remove_diacritics 1')",
        "CREATE TABLE scratch_log (n INTEGER)",
    ] {
        sqlx::query(ddl).execute(&mut conn).await?;
    }
    let n = 15;
    println!("\nThe triggers' statements on the 140 KB reply's row (median of {n}, ms; statement · commit):");
    let show = |what: &str, (run, end): (f64, f64)| println!("  {what:<72} {run:>8.2} · {end:.2}");
    show(
        "SELECT body FROM message_search_text (the JSON view)",
        time_statement(&mut conn, n, false, |_| {
            vec![
                sqlx::query(
                    "INSERT INTO scratch_log SELECT length(body) FROM message_search_text WHERE message_rowid = ?",
                )
                .bind(rowid),
            ]
        })
        .await?,
    );
    show(
        "SELECT body FROM message_cjk_text (the view again + the GLOB)",
        time_statement(&mut conn, n, false, |_| {
            vec![
                sqlx::query(
                    "INSERT INTO scratch_log SELECT length(body) FROM message_cjk_text WHERE message_rowid = ?",
                )
                .bind(rowid),
            ]
        })
        .await?,
    );
    show(
        "length(parts) != octet_length(parts) on the row (a non-ASCII test)",
        time_statement(&mut conn, n, false, |_| {
            vec![
                sqlx::query(
                    "INSERT INTO scratch_log SELECT length(parts) != octet_length(parts) FROM messages WHERE rowid = ?",
                )
                .bind(rowid),
            ]
        })
        .await?,
    );
    show(
        "parts GLOB '*[CJK class]*' on the row (0019's character test, on the JSON)",
        time_statement(&mut conn, n, false, |_| {
            vec![
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "INSERT INTO scratch_log SELECT parts GLOB {CJK_PATTERN} FROM messages WHERE rowid = ?"
                )))
                .bind(rowid),
            ]
        })
        .await?,
    );
    show(
        "0021's test for unspaced text: non-ASCII first, then the GLOB; or a \\u escape",
        time_statement(&mut conn, n, false, |_| {
            vec![
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "INSERT INTO scratch_log SELECT CASE WHEN (length(parts) != octet_length(parts) \
                       AND parts GLOB {CJK_PATTERN}) OR instr(parts, '\\u') > 0 THEN 1 ELSE 0 END \
                     FROM messages WHERE rowid = ?"
                )))
                .bind(rowid),
            ]
        })
        .await?,
    );
    let bound = text.clone();
    show(
        "INSERT the text into a table like message_words (prefix 2 3), new rowid",
        time_statement(&mut conn, n, true, |i| {
            vec![
                sqlx::query("INSERT INTO scratch_prefix (rowid, body) VALUES (?, ?)")
                    .bind(i as i64 + 1)
                    .bind(bound.clone()),
            ]
        })
        .await?,
    );
    show(
        "INSERT the text into the same without prefix lists, new rowid",
        time_statement(&mut conn, n, true, |i| {
            vec![
                sqlx::query("INSERT INTO scratch_plain (rowid, body) VALUES (?, ?)")
                    .bind(i as i64 + 1)
                    .bind(bound.clone()),
            ]
        })
        .await?,
    );
    show(
        "DELETE + INSERT the same row of the prefix table (a re-index)",
        time_statement(&mut conn, n, true, |_| {
            vec![
                sqlx::query("DELETE FROM scratch_prefix WHERE rowid = 1"),
                sqlx::query("INSERT INTO scratch_prefix (rowid, body) VALUES (1, ?)").bind(bound.clone()),
            ]
        })
        .await?,
    );
    show(
        "INSERT/DELETE an empty row of a trigram table (message_cjk for Latin text)",
        time_statement(&mut conn, n, true, |_| {
            vec![
                sqlx::query("DELETE FROM scratch_cjk WHERE rowid = 1"),
                sqlx::query("INSERT INTO scratch_cjk (rowid, body) VALUES (1, '')"),
            ]
        })
        .await?,
    );
    show(
        "the whole update trigger: UPDATE status streaming, then success (re-indexes)",
        time_statement(&mut conn, n, true, |_| {
            vec![
                sqlx::query("UPDATE messages SET status = 'streaming' WHERE rowid = ?").bind(rowid),
                sqlx::query("UPDATE messages SET status = 'success' WHERE rowid = ?").bind(rowid),
            ]
        })
        .await?,
    );
    for trigger in colloquy_bench::SEARCH_TRIGGERS {
        sqlx::query(sqlx::AssertSqlSafe(format!("DROP TRIGGER {trigger}"))).execute(&mut conn).await?;
    }
    show(
        "the same UPDATEs without the triggers",
        time_statement(&mut conn, n, true, |_| {
            vec![
                sqlx::query("UPDATE messages SET status = 'streaming' WHERE rowid = ?").bind(rowid),
                sqlx::query("UPDATE messages SET status = 'success' WHERE rowid = ?").bind(rowid),
            ]
        })
        .await?,
    );
    conn.close().await?;
    Ok(())
}

fn main() -> Result<()> {
    tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(run())
}

async fn run() -> Result<()> {
    for reply in &REPLIES {
        println!("{} — medians of {REPS} replies after a warm-up, ms:", reply.name);
        println!(
            "  {:<10} {:>12} {:>18} {:>24} {:>12} {:>16}",
            "", "insert_turn", "first checkpoint", "later checkpoints (n, sum)", "final write", "CPU per reply"
        );
        for with_index in [true, false] {
            let t = replay(reply, with_index).await?;
            let per_reply = t.other_checkpoints.len() / REPS;
            println!(
                "  {:<10} {:>12.2} {:>18.2} {:>15} {:>8.2} {:>12.2} {:>16.2}",
                if with_index { "with" } else { "without" },
                median(&t.insert_turn),
                median(&t.first_checkpoint),
                per_reply,
                total(&t.other_checkpoints) / REPS as f64,
                median(&t.final_write),
                median(&t.cpu_per_reply),
            );
        }
    }
    take_apart().await
}
