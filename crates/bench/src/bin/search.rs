//! `colloquy-bench-search`: full-text search over a large database (`cargo xtask bench
//! search`; results in `docs/benchmarks.md`).
//!
//! A database of 100,000 messages (1,000 topics of 50 turns: a user message and a reply,
//! words drawn from a Zipf-distributed vocabulary, so a few words are in most messages
//! and most words in few, with some Chinese) is written in one transaction through the
//! index's triggers. Then:
//!
//! - search latency through `Store::search_messages` (what the operation runs: ranking,
//!   snippets, filters, which hits are on their topic's active path), for a mix of
//!   queries: rare, medium and common words, two words, a prefix, CJK, a two-letter word;
//! - the index's size as a share of the database (SQLite's `dbstat`, after `VACUUM`): both
//!   tables, the word index (`message_words`) and the trigrams of CJK text (`message_cjk`);
//! - the start-up consistency check and a full rebuild;
//! - the cost of one chunk checkpoint (`Store::write_checkpoints` of a growing reply, as
//!   the stream manager writes it) with the index's triggers and, as the baseline in the
//!   same run, on a copy of the database without them, alternating between the two.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use colloquy_bench::load_average;
use colloquy_bench::machine::Machine;
use colloquy_bench::report::{Table, Verdict};
use colloquy_bench::stats::{Latencies, median};
use protocol::search::SearchRequest;
use protocol::{MessageId, MessageRole, MessageStatus, ModelRef, ProviderId, TurnId, UiMessage, UiPart};
use sqlx::{Connection, SqliteConnection};
use store::{AssistantSlot, Checkpoint, NewTurn, Store};

const USAGE: &str = "\
Usage: colloquy-bench-search [--messages N] [--quick]

Run from the repository root (`cargo xtask bench search` builds it in release mode).
  --messages  how many messages the database holds (default 100000)
  --quick     10,000 messages, to check the benchmark itself works";

/// Latency target for one search (the issue's).
const TARGET_P99_MS: f64 = 50.0;
const TURNS_PER_TOPIC: usize = 50;
const VOCABULARY: usize = 20_000;
/// Checkpoints of one measured reply, and the words each adds (about 30 tokens: one
/// every 500 ms at 60 tokens/s).
const CHECKPOINTS: usize = 200;
const CHECKPOINT_GROWTH: usize = 20;

struct Setup {
    messages: usize,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse(&args).and_then(|setup| {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
        runtime.block_on(run(setup))
    }) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn parse(args: &[String]) -> Result<Setup> {
    let mut setup = Setup { messages: 100_000 };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--messages" => {
                let value = args.next().with_context(|| format!("--messages needs a value\n\n{USAGE}"))?;
                setup.messages = value.parse::<usize>().context("--messages takes a number")?.max(1_000);
            }
            "--quick" => setup.messages = 10_000,
            "--help" | "-h" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => bail!("unknown option `{other}`\n\n{USAGE}"),
        }
    }
    Ok(setup)
}

/// xorshift64*: the same database on every run.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Words and their Zipf weights (rank `r` drawn with probability ∝ 1/r).
struct Words {
    words: Vec<String>,
    cumulative: Vec<f64>,
}

impl Words {
    fn new() -> Self {
        const SYLLABLES: [&str; 24] = [
            "ka", "lo", "mi", "ren", "tu", "sa", "vor", "pe", "di", "nal", "qu", "bri", "zo", "fen", "ga", "tho",
            "mur", "el", "is", "ob", "cra", "wen", "dy", "ph",
        ];
        let mut words = Vec::with_capacity(VOCABULARY);
        for i in 0..VOCABULARY {
            let (mut n, mut word) = (i + 24 * 24, String::new());
            while n > 0 {
                word.push_str(SYLLABLES[n % 24]);
                n /= 24;
            }
            words.push(word);
        }
        let mut total = 0.0;
        let cumulative = (1..=VOCABULARY)
            .map(|rank| {
                total += 1.0 / rank as f64;
                total
            })
            .collect();
        Self { words, cumulative }
    }

    fn draw(&self, random: &mut Random) -> &str {
        let total = self.cumulative.last().copied().unwrap_or(1.0);
        let at = self.cumulative.partition_point(|&c| c < random.unit() * total).min(self.words.len() - 1);
        &self.words[at]
    }

    fn sentence(&self, random: &mut Random, words: usize) -> String {
        let mut text = String::new();
        for i in 0..words {
            if i > 0 {
                text.push(if i % 12 == 0 { '.' } else { ' ' });
                if i % 12 == 0 {
                    text.push(' ');
                }
            }
            text.push_str(self.draw(random));
        }
        // One message in 20 has some Chinese in it.
        if random.next().is_multiple_of(20) {
            text.push_str(" 我们用中文讨论全文检索和分词的问题");
        }
        text
    }
}

async fn run(setup: Setup) -> Result<()> {
    let machine = Machine::describe();
    println!(
        "Machine: {} · {} cores · {:.1} GiB RAM · Linux {}",
        machine.cpu_model, machine.cores, machine.memory_gib, machine.kernel
    );
    println!(
        "Build: {}",
        if cfg!(debug_assertions) { "DEBUG (numbers are meaningless; use --release)" } else { "release" }
    );
    println!("Load average at start: {}\n", load_average());

    let dir = tempfile::tempdir()?;
    let path = dir.path().join("colloquy.db");
    let words = Words::new();
    let started = Instant::now();
    let (topics, text_bytes) = fill(&path, &words, setup.messages).await?;
    let fill_time = started.elapsed().as_secs_f64();
    println!(
        "Database: {} messages in {topics} topics, {:.1} MB of message text, written through the index in {fill_time:.1} s\n",
        setup.messages,
        text_bytes as f64 / 1e6
    );

    let mut table = Table::default();
    let input = format!("{} messages, {topics} topics", setup.messages);

    // Opening runs the consistency check.
    let started = Instant::now();
    let store = Store::open(&path).await?;
    let open_ms = started.elapsed().as_secs_f64() * 1e3;
    let started = Instant::now();
    let rebuilt = store.check_search_index().await?;
    let check_ms = started.elapsed().as_secs_f64() * 1e3;
    if rebuilt {
        bail!("the index did not match the messages after filling");
    }
    table.push("open", "open (migrations + index check)", input.clone(), format!("{open_ms:.0} ms"), "", Verdict::Info);
    table.push("check", "index consistency check alone", input.clone(), format!("{check_ms:.1} ms"), "", Verdict::Info);

    latency(&store, &words, &input, &mut table).await?;

    let started = Instant::now();
    store.rebuild_search_index().await?;
    let rebuild_s = started.elapsed().as_secs_f64();
    table.push(
        "rebuild",
        "full index rebuild (damaged index)",
        input.clone(),
        format!("{rebuild_s:.1} s"),
        "",
        Verdict::Info,
    );

    store.compact().await?;
    store.close().await;
    size(&path, &input, &mut table).await?;

    checkpoints(&path, dir.path(), &words, &mut table).await?;

    table.print();
    println!("\nLoad average at end: {}", load_average());
    Ok(())
}

/// Writes the database: topics of `TURNS_PER_TOPIC` turns, each a user message and a
/// finished reply, in one transaction. Returns the number of topics and of text bytes.
async fn fill(path: &Path, words: &Words, messages: usize) -> Result<(usize, usize)> {
    Store::open(path).await?.close().await;
    let mut conn = SqliteConnection::connect(&format!("sqlite://{}", path.display())).await?;
    let mut tx = conn.begin().await?;
    let mut random = Random(0x5eed_cafe_f00d_d00d);
    let turns = messages / 2;
    let topics = turns.div_ceil(TURNS_PER_TOPIC);
    let mut text_bytes = 0;
    let mut turn = 0;
    for t in 0..topics {
        let topic = format!("topic-{t}");
        let day = 1 + t % 28;
        let created = format!("2026-01-{day:02}T10:00:00.000Z");
        sqlx::query("INSERT INTO topics (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)")
            .bind(topic.as_str())
            .bind(words.sentence(&mut random, 4))
            .bind(created.as_str())
            .bind(created.as_str())
            .execute(&mut *tx)
            .await?;
        let mut parent: Option<String> = None;
        for i in 0..TURNS_PER_TOPIC {
            if turn >= turns {
                break;
            }
            turn += 1;
            let at = format!("2026-01-{day:02}T10:{:02}:{:02}.000Z", i / 60, i % 60);
            let user = format!("m-{t}-{i}-u");
            let user_text = words.sentence(&mut random, 15);
            let reply_text = words.sentence(&mut random, 80);
            text_bytes += user_text.len() + reply_text.len();
            let user_parts = serde_json::to_string(&UiMessage::user_text("", &user_text).parts)?;
            let reply_parts = serde_json::to_string(&vec![UiPart::Text {
                text: reply_text,
                state: Some(protocol::PartState::Done),
            }])?;
            let insert = "INSERT INTO messages (id, topic_id, parent_id, turn_id, role, status, provider_id, model_name, \
                parts, metadata, selected, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'success', ?, ?, ?, '{}', ?, ?, ?)";
            let turn_id = format!("turn-{t}-{i}");
            for (id, parent_id, role, model, parts) in [
                (&user, parent.as_deref(), "user", None, &user_parts),
                (&format!("m-{t}-{i}-a"), Some(user.as_str()), "assistant", Some("bench-model"), &reply_parts),
            ] {
                sqlx::query(insert)
                    .bind(id.as_str())
                    .bind(topic.as_str())
                    .bind(parent_id)
                    .bind(turn_id.as_str())
                    .bind(role)
                    .bind(model.map(|_| "bench"))
                    .bind(model)
                    .bind(parts.as_str())
                    .bind(i as i64)
                    .bind(at.as_str())
                    .bind(at.as_str())
                    .execute(&mut *tx)
                    .await?;
            }
            parent = Some(user);
        }
    }
    tx.commit().await?;
    conn.close().await?;
    Ok((topics, text_bytes))
}

/// Latency of `search_messages` over a mix of queries, each kind on its own row too.
async fn latency(store: &Store, words: &Words, input: &str, table: &mut Table) -> Result<()> {
    let pick = |rank: usize| words.words[rank.min(words.words.len() - 1)].clone();
    let kinds: Vec<(&str, Vec<SearchRequest>)> = vec![
        ("rare word", (0..40).map(|i| plain(&pick(15_000 + i * 100))).collect()),
        ("medium word", (0..40).map(|i| plain(&pick(300 + i * 20))).collect()),
        ("common word (in most messages)", (0..20).map(|i| plain(&pick(i))).collect()),
        ("two words", (0..40).map(|i| plain(&format!("{} {}", pick(50 + i), pick(2_000 + i * 10)))).collect()),
        ("prefix", (0..40).map(|i| plain(&pick(1_000 + i * 30)[..4.min(pick(1_000 + i * 30).len())])).collect()),
        ("CJK", ["中文讨论", "全文检索", "分词的问题", "检索"].iter().map(|q| plain(q)).collect()),
        (
            "word + filters (role, model, dates)",
            (0..20)
                .map(|i| SearchRequest {
                    role: Some(MessageRole::Assistant),
                    model: Some("bench-model".into()),
                    from: Some("2026-01-05".into()),
                    to: Some("2026-01-20".into()),
                    ..plain(&pick(500 + i * 7))
                })
                .collect(),
        ),
        (
            "one topic",
            (0..20).map(|i| SearchRequest { topic_id: Some("topic-7".into()), ..plain(&pick(i * 3)) }).collect(),
        ),
    ];
    // Warm-up: the page cache holds the index, as it does after the first search.
    for (_, requests) in &kinds {
        store.search_messages(&requests[0]).await?;
    }
    let mut all = Vec::new();
    for (kind, requests) in &kinds {
        let mut samples = Vec::new();
        for _ in 0..3 {
            for request in requests {
                let started = Instant::now();
                let results = store.search_messages(request).await?;
                samples.push(started.elapsed().as_nanos() as u64);
                std::hint::black_box(results);
            }
        }
        all.extend_from_slice(&samples);
        let l = Latencies::of(samples);
        table.push(
            "latency",
            format!("search: {kind}"),
            input.to_owned(),
            format!("p50 {:.1} ms · p99 {:.1} ms", l.p50_ms, l.p99_ms),
            format!("p99 < {TARGET_P99_MS} ms"),
            Verdict::of(l.p99_ms < TARGET_P99_MS),
        );
    }
    let l = Latencies::of(all);
    table.push(
        "latency",
        "search: the whole mix",
        format!("{input}, {} searches", l.count),
        format!("p50 {:.1} ms · p99 {:.1} ms · max {:.1} ms", l.p50_ms, l.p99_ms, l.max_ms),
        format!("p99 < {TARGET_P99_MS} ms"),
        Verdict::of(l.p99_ms < TARGET_P99_MS),
    );
    // Words of one or two characters: Latin ones have prefix lists of their own; two CJK
    // characters have no trigram, so they are a substring test of every CJK message.
    let mut samples = Vec::new();
    for query in ["ka", "lo", "mi", "中文", "zz"] {
        let started = Instant::now();
        store.search_messages(&plain(query)).await?;
        samples.push(started.elapsed().as_nanos() as u64);
    }
    let l = Latencies::of(samples);
    table.push(
        "latency",
        "search: one- or two-character words (ka, lo, mi, zz; 中文: a scan of CJK messages)",
        input.to_owned(),
        format!("p50 {:.0} ms · max {:.0} ms", l.p50_ms, l.max_ms),
        "",
        Verdict::Info,
    );
    Ok(())
}

fn plain(query: &str) -> SearchRequest {
    SearchRequest { query: query.to_owned(), ..Default::default() }
}

/// The index's share of the database file, from SQLite's `dbstat`.
async fn size(path: &Path, input: &str, table: &mut Table) -> Result<()> {
    let mut conn = SqliteConnection::connect(&format!("sqlite://{}?mode=ro", path.display())).await?;
    let total: i64 = sqlx::query_scalar("SELECT sum(pgsize) FROM dbstat").fetch_one(&mut conn).await?;
    let pages = |name: &'static str| {
        sqlx::query_scalar::<_, i64>("SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name LIKE ?1 || '%'").bind(name)
    };
    let words = pages("message_words").fetch_one(&mut conn).await?;
    let cjk = pages("message_cjk").fetch_one(&mut conn).await?;
    // Before migration 0019 the index was one trigram table, `message_search`.
    let cjk = cjk + pages("message_search").fetch_one(&mut conn).await?;
    let index = words + cjk;
    let messages: i64 = sqlx::query_scalar("SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name LIKE 'messages%'")
        .fetch_one(&mut conn)
        .await?;
    conn.close().await?;
    let mb = |bytes: i64| bytes as f64 / 1e6;
    table.push(
        "size",
        "index size / database size",
        input.to_owned(),
        format!(
            "{:.0} MB of {:.0} MB ({:.0} %): words {:.0} MB, trigrams {:.0} MB",
            mb(index),
            mb(total),
            100.0 * index as f64 / total as f64,
            mb(words),
            mb(cjk)
        ),
        format!("messages table and its indexes: {:.0} MB", mb(messages)),
        Verdict::Info,
    );
    Ok(())
}

/// One checkpoint of a growing reply, with the index's triggers and without them.
async fn checkpoints(path: &Path, dir: &Path, words: &Words, table: &mut Table) -> Result<()> {
    let bare = dir.join("without-index.db");
    std::fs::copy(path, &bare)?;
    let with = Store::open(path).await?;
    let without = Store::open(&bare).await?;
    colloquy_bench::drop_search_index(&without).await?;
    let model = ModelRef { provider_id: ProviderId("bench".into()), model: "bench-model".into() };
    let mut replies = Vec::new();
    for store in [&with, &without] {
        let topic = store.create_topic("checkpoints", None).await?;
        let reply = MessageId::new();
        store
            .insert_turn(&NewTurn {
                topic_id: topic.id.clone(),
                turn_id: TurnId::new(),
                user_message_id: MessageId::new(),
                user_parts: UiMessage::user_text("", "write a long answer").parts,
                edit_of: None,
                assistants: vec![AssistantSlot {
                    message_id: reply.clone(),
                    model: model.clone(),
                    metadata: serde_json::json!({}),
                }],
            })
            .await?;
        replies.push(reply);
    }
    let mut random = Random(7);
    let mut text = String::new();
    let (mut with_ns, mut without_ns) = (Vec::new(), Vec::new());
    // Which checkpoints re-index the reply (0016's rule: under 4 KB, or across another
    // 4 KB of parts), to compare the others alone: the median of all of them sits higher
    // among the cheaper ones once a sixth of them re-index.
    let mut reindexed = Vec::new();
    let mut previous_len = 0;
    for i in 0..CHECKPOINTS {
        text.push(' ');
        text.push_str(&words.sentence(&mut random, CHECKPOINT_GROWTH));
        let parts_len = serde_json::to_string(&vec![UiPart::Text {
            text: text.clone(),
            state: Some(protocol::PartState::Streaming),
        }])?
        .len();
        reindexed.push(parts_len < 4096 || parts_len / 4096 != previous_len / 4096);
        previous_len = parts_len;
        // Alternate which goes first: neither always gets a warmer cache.
        let order: [usize; 2] = if i % 2 == 0 { [0, 1] } else { [1, 0] };
        for which in order {
            let store = if which == 0 { &with } else { &without };
            let checkpoint = Checkpoint {
                message_id: replies[which].clone(),
                status: MessageStatus::Streaming,
                status_reason: None,
                message: UiMessage {
                    id: replies[which].to_string(),
                    role: MessageRole::Assistant,
                    parts: vec![UiPart::Text { text: text.clone(), state: Some(protocol::PartState::Streaming) }],
                    metadata: None,
                },
            };
            let started = Instant::now();
            store.write_checkpoints(&[checkpoint]).await?;
            let ns = started.elapsed().as_nanos() as u64;
            if which == 0 { with_ns.push(ns) } else { without_ns.push(ns) }
        }
    }
    let med = |samples: &[u64]| median(&samples.iter().map(|&ns| ns as f64 / 1e6).collect::<Vec<_>>());
    let (with_l, without_l) = (Latencies::of(with_ns.clone()), Latencies::of(without_ns.clone()));
    let input =
        format!("{CHECKPOINTS} checkpoints of one reply growing to {} KB, on the full database", text.len() / 1000);
    table.push(
        "checkpoint",
        "write one chunk checkpoint, with the index",
        input.clone(),
        format!("median {:.2} ms · p99 {:.2} ms", med(&with_ns), with_l.p99_ms),
        format!(
            "without: median {:.2} ms · p99 {:.2} ms ({:.2}×)",
            med(&without_ns),
            without_l.p99_ms,
            med(&with_ns) / med(&without_ns).max(1e-9)
        ),
        Verdict::Info,
    );
    let quiet =
        |samples: &[u64]| samples.iter().zip(&reindexed).filter(|(_, re)| !**re).map(|(&ns, _)| ns).collect::<Vec<_>>();
    let mean = |samples: &[u64]| samples.iter().sum::<u64>() as f64 / samples.len().max(1) as f64 / 1e6;
    table.push(
        "checkpoint",
        "… those that re-index nothing (over 4 KB, no 4 KB crossed); and the mean of all",
        format!("{} of the {CHECKPOINTS}", quiet(&with_ns).len()),
        format!("median {:.2} ms; mean of all {:.2} ms", med(&quiet(&with_ns)), mean(&with_ns)),
        format!(
            "without: median {:.2} ms ({:.2}×); mean of all {:.2} ms ({:.2}×)",
            med(&quiet(&without_ns)),
            med(&quiet(&with_ns)) / med(&quiet(&without_ns)).max(1e-9),
            mean(&without_ns),
            mean(&with_ns) / mean(&without_ns).max(1e-9)
        ),
        Verdict::Info,
    );
    with.close().await;
    without.close().await;
    Ok(())
}
