//! `colloquy-bench-providers`: how fast each wire format's answer is parsed and mapped to
//! completion events (`cargo xtask bench providers`; results in `docs/benchmarks.md`).
//!
//! One large reply — reasoning, markdown text with code, a tool call with long arguments,
//! usage — is recorded from the testkit server over HTTP in each format, exactly as the
//! bytes come off the socket. Each recording is then decoded in memory, fed in 16 KiB
//! pieces like network reads, three ways:
//!
//! - `sse`: event-stream framing only ([`SseDecoder`]), the floor every approach pays;
//! - `sse + Value`: framing plus each frame's JSON parsed into a generic
//!   `serde_json::Value` tree — what a client does before it has mapped anything;
//! - `decoder`: the real thing ([`StreamDecoder`]): framing, lenient typed parsing and
//!   the format's event mapper, out to [`CompletionEvent`]s.
//!
//! Every repetition of every way runs on the same bytes in one process; the table shows
//! medians and the decoder's throughput relative to `sse + Value`.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use colloquy_bench::load_average;
use colloquy_bench::machine::Machine;
use colloquy_bench::report::{Table, Verdict};
use colloquy_bench::stats::median;
use protocol::api::ApiFormat;
use providers::sse::SseDecoder;
use providers::{CompletionEvent, StreamDecoder};
use testkit::{MockConfig, MockServer, Script};

const USAGE: &str = "\
Usage: colloquy-bench-providers [--reps N] [--quick]

Run from the repository root (`cargo xtask bench providers` builds it in release mode).
  --reps     repetitions per measured median (default 9)
  --quick    a small reply, to check the benchmark itself works";

/// The size of each piece fed to a decoder: a typical socket read.
const PIECE: usize = 16 * 1024;

struct Setup {
    reps: usize,
    quick: bool,
}

/// One format's recorded answer and what decoding it must produce.
struct Recording {
    format: ApiFormat,
    body: Vec<u8>,
}

/// What one decoding pass counted, so every way is checked to have done the whole job.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Counts {
    frames: usize,
    events: usize,
    text_bytes: usize,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse(&args).and_then(run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn parse(args: &[String]) -> Result<Setup> {
    let mut setup = Setup { reps: 9, quick: false };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--reps" => {
                let value = args.next().with_context(|| format!("--reps needs a value\n\n{USAGE}"))?;
                setup.reps = value.parse::<usize>().context("--reps takes a number")?.max(1);
            }
            "--quick" => setup.quick = true,
            "--help" | "-h" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => bail!("unknown option `{other}`\n\n{USAGE}"),
        }
    }
    Ok(setup)
}

fn run(setup: Setup) -> Result<()> {
    let script = big_reply(setup.quick);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let recordings = runtime.block_on(record(&script))?;
    let expected_text: usize = script.chunks.iter().flatten().map(String::len).sum();

    let machine = Machine::describe();
    println!(
        "Machine: {} · {} cores · {:.1} GiB RAM · Linux {}",
        machine.cpu_model, machine.cores, machine.memory_gib, machine.kernel
    );
    println!(
        "Build: {} · medians of {} repetitions after 1 warm-up · fed in {} KiB pieces{}",
        if cfg!(debug_assertions) { "DEBUG (numbers are meaningless; use --release)" } else { "release" },
        setup.reps,
        PIECE / 1024,
        if setup.quick { " · --quick reply" } else { "" }
    );
    println!(
        "Reply: {} text chunks ({} KB), {} reasoning chunks, 1 tool call with {} KB of arguments",
        script.chunks.as_ref().map_or(0, Vec::len),
        expected_text / 1000,
        script.reasoning.len(),
        script.tool_calls.iter().map(|call| call.arguments.len()).sum::<usize>() / 1000
    );
    println!("Load average at start: {}\n", load_average());

    let mut table = Table::default();
    for recording in &recordings {
        measure(recording, setup.reps, expected_text, &mut table).with_context(|| format!("{}", recording.format))?;
    }
    table.print();
    println!("\nLoad average at end: {}", load_average());
    Ok(())
}

/// A long answer with everything a real one has: thinking, markdown prose with escapes and
/// non-ASCII text, a fenced code block, a tool call whose arguments are a file's content.
fn big_reply(quick: bool) -> Script {
    const PROSE: &str = "The **stream manager** owns every live reply: a window that closes \
        or reloads never stops it, and a window that comes back sees each chunk once — \
        nothing missing, nothing doubled. Prices: 12 € or $13 (≈ “a coffee”); emoji 🎉.\n\n\
        ```rust\nfn main() {\n    let greeting = \"hello\\tworld\";\n    println!(\"{greeting}\");\n}\n```\n\n";
    let (text_chunks, reasoning_chunks, argument_lines) =
        if quick { (2_000, 400, 200) } else { (60_000, 12_000, 4_000) };
    let tokens = tokens(PROSE);
    let chunks: Vec<String> = tokens.iter().cycle().take(text_chunks).cloned().collect();
    let reasoning: Vec<String> = tokens.iter().rev().cycle().take(reasoning_chunks).cloned().collect();
    let content: String =
        (0..argument_lines).map(|line| format!("line {line}: \"quoted\" text\twith a tab and ünïcode\n")).collect();
    let arguments = serde_json::json!({ "path": "notes/bench.md", "content": content }).to_string();
    Script::text(chunks).with_reasoning(reasoning).with_tool_call("write_file", arguments).with_usage(1_200, 80_000)
}

/// Text cut into model-token-sized pieces (about four bytes, never inside a character).
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for ch in text.chars() {
        current.push(ch);
        if current.len() >= 4 || ch == ' ' || ch == '\n' {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The script's answer in every format, as the testkit server sends it over HTTP.
async fn record(script: &Script) -> Result<Vec<Recording>> {
    let server = MockServer::start(MockConfig { token_delay: Duration::ZERO, ..MockConfig::default() })
        .await
        .context("start the testkit server")?;
    let http = reqwest::Client::builder().no_proxy().build()?;
    let mut recordings = Vec::new();
    for format in ApiFormat::ALL {
        server.push_script(script.clone());
        let base = server.base_url();
        let request = match format {
            ApiFormat::OpenaiChat => http
                .post(format!("{base}/chat/completions"))
                .json(&serde_json::json!({ "model": "scripted", "stream": true, "messages": [{ "role": "user", "content": "hi" }] })),
            ApiFormat::OpenaiResponses => http
                .post(format!("{base}/responses"))
                .json(&serde_json::json!({ "model": "scripted", "stream": true, "input": "hi" })),
            ApiFormat::Anthropic => http
                .post(format!("{base}/messages"))
                .header("anthropic-version", "2023-06-01")
                .json(&serde_json::json!({ "model": "scripted", "stream": true, "max_tokens": 100_000, "messages": [{ "role": "user", "content": "hi" }] })),
            ApiFormat::Gemini => http
                .post(format!("{}/models/scripted:streamGenerateContent?alt=sse", server.gemini_base_url()))
                .json(&serde_json::json!({ "contents": [{ "role": "user", "parts": [{ "text": "hi" }] }] })),
        };
        let response = request.send().await.with_context(|| format!("record {format}"))?;
        ensure!(response.status().is_success(), "{format}: the testkit answered {}", response.status());
        let body = response.bytes().await.with_context(|| format!("read {format}"))?.to_vec();
        recordings.push(Recording { format, body });
    }
    server.shutdown().await;
    Ok(recordings)
}

fn measure(recording: &Recording, reps: usize, expected_text: usize, table: &mut Table) -> Result<()> {
    let body = recording.body.as_slice();
    let sse = timed(reps, || sse_only(body));
    let value = timed(reps, || sse_and_value(body));
    let decoder = timed(reps, || decode(recording.format, body));
    let (sse, value, decoder) = (sse?, value?, decoder?);
    ensure!(sse.0.frames == value.0.frames, "framing and JSON passes saw different frame counts");
    ensure!(
        decoder.0.text_bytes == expected_text,
        "the decoder produced {} bytes of text, the script has {expected_text}",
        decoder.0.text_bytes
    );

    let mb = body.len() as f64 / 1e6;
    let input = format!("{:.1} MB, {} frames", mb, sse.0.frames);
    let format = recording.format.as_str();
    let throughput = |seconds: f64| format!("{:.0} MB/s", mb / seconds);
    table.push("sse", format!("`{format}` framing only"), input.clone(), throughput(sse.1), "", Verdict::Info);
    table.push(
        "value",
        format!("`{format}` framing + JSON → `Value`"),
        input.clone(),
        throughput(value.1),
        "",
        Verdict::Info,
    );
    table.push(
        "decoder",
        format!("`{format}` `StreamDecoder` (parse + map)"),
        format!("{input}, {} events", decoder.0.events),
        format!("{} · {:.2} M events/s", throughput(decoder.1), decoder.0.events as f64 / decoder.1 / 1e6),
        format!("{:.2}× the speed of framing + `Value`", value.1 / decoder.1),
        Verdict::Info,
    );
    Ok(())
}

/// One warm-up, then the median of `reps` timed passes; every pass must count the same.
fn timed(reps: usize, mut pass: impl FnMut() -> Result<Counts>) -> Result<(Counts, f64)> {
    let counts = pass()?;
    let mut seconds = Vec::with_capacity(reps);
    for _ in 0..reps {
        let started = Instant::now();
        let again = std::hint::black_box(pass()?);
        seconds.push(started.elapsed().as_secs_f64());
        ensure!(again == counts, "a repetition counted {again:?}, the warm-up {counts:?}");
    }
    Ok((counts, median(&seconds)))
}

fn sse_only(body: &[u8]) -> Result<Counts> {
    let mut decoder = SseDecoder::new();
    let mut counts = Counts::default();
    for piece in body.chunks(PIECE) {
        for frame in decoder.push(piece)? {
            counts.frames += 1;
            counts.text_bytes += frame.data.len();
        }
    }
    counts.frames += usize::from(decoder.finish().is_some());
    Ok(counts)
}

fn sse_and_value(body: &[u8]) -> Result<Counts> {
    let mut decoder = SseDecoder::new();
    let mut counts = Counts::default();
    let parse = |data: &str, counts: &mut Counts| -> Result<()> {
        counts.frames += 1;
        if data != "[DONE]" {
            let value: serde_json::Value = serde_json::from_str(data).context("a frame is not JSON")?;
            counts.events += usize::from(value.is_object());
        }
        Ok(())
    };
    for piece in body.chunks(PIECE) {
        for frame in decoder.push(piece)? {
            parse(&frame.data, &mut counts)?;
        }
    }
    if let Some(frame) = decoder.finish() {
        parse(&frame.data, &mut counts)?;
    }
    Ok(counts)
}

fn decode(format: ApiFormat, body: &[u8]) -> Result<Counts> {
    let mut decoder = StreamDecoder::new(format, "Bench");
    let mut counts = Counts::default();
    let mut tally = |items: Vec<Result<CompletionEvent, providers::ProviderError>>| -> Result<()> {
        for item in items {
            let event = item.map_err(|err| anyhow::anyhow!("{}: {}", err.kind.as_str(), err.message))?;
            counts.events += 1;
            if let CompletionEvent::TextDelta(text) = &event {
                counts.text_bytes += text.len();
            }
        }
        Ok(())
    };
    for piece in body.chunks(PIECE) {
        tally(decoder.push(piece))?;
    }
    tally(decoder.finish())?;
    ensure!(decoder.is_finished(), "the answer did not end");
    Ok(counts)
}
