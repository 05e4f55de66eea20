//! Full-text search over messages.
//!
//! The index is the FTS5 table `message_search` (migration 0014): SQL triggers on
//! `messages` keep it in the same transaction as every write, so it cannot fall behind a
//! committed message. At open, [`Store::check_search_index`] compares it with `messages`
//! (row count, sum and maximum of the rowids: a missing, extra or renumbered row shows)
//! and rebuilds it when they differ; a search that finds the index damaged (SQLite's
//! `SQLITE_CORRUPT`) rebuilds it and asks again.
//!
//! The tokenizer is `trigram`: a plain word matches anywhere inside a word (prefixes
//! included) and text without spaces between words (Chinese, Japanese) is found. Words
//! shorter than three characters have no trigram; they are matched by a substring test on
//! the rows the other words found (or, when every word is short, on every row).

use std::collections::{HashMap, HashSet};

use protocol::search::{DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, SearchHit, SearchRequest, SearchResults, SnippetPiece};
use protocol::{MessageId, MessageRole, TopicId, TurnId};
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqliteConnection};

use crate::topics::model_ref;
use crate::tree::{self, Tip, Tree};
use crate::{Result, Store, StoreError, sqlite_code};

/// Where a hit begins and ends in a snippet SQLite cuts (private-use characters, which
/// message text does not contain in practice and which never reach the client).
const HIT_START: char = '\u{E000}';
const HIT_END: char = '\u{E001}';

/// Characters of context around a hit in a snippet.
const SNIPPET_CONTEXT: usize = 60;

/// What a query asks the index.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// The FTS5 expression; `None` when every word is too short for the index.
    expression: Option<String>,
    /// Words of one or two characters every hit must contain (any case).
    short_words: Vec<String>,
    /// The user wrote FTS5 syntax: a mistake in it is theirs to fix.
    explicit: bool,
}

/// Reads a query: plain words become quoted FTS5 strings (so `C++`, `don't` or `a:b` are
/// words, never syntax); a query with double quotes, parentheses or an operator is passed
/// to FTS5 as written.
pub(crate) fn plan(query: &str) -> Result<Plan> {
    let query = query.trim();
    if query.is_empty() {
        return Err(StoreError::BadQuery { field: "query", message: "type something to search for".into() });
    }
    let explicit = query.contains(['"', '(', ')'])
        || query.split_whitespace().any(|word| matches!(word, "AND" | "OR" | "NOT") || word.starts_with("NEAR("));
    if explicit {
        return Ok(Plan { expression: Some(query.to_owned()), short_words: Vec::new(), explicit });
    }
    let (long, short): (Vec<&str>, Vec<&str>) = query.split_whitespace().partition(|word| word.chars().count() >= 3);
    let expression = (!long.is_empty())
        .then(|| long.iter().map(|word| format!("\"{}\"", word.replace('"', "\"\""))).collect::<Vec<_>>().join(" "));
    Ok(Plan { expression, short_words: short.into_iter().map(str::to_lowercase).collect(), explicit })
}

/// `from`/`to` as stored times (UTC, `…Z`, sortable as text). A date alone means the
/// start of that day for `from` and its end for `to`.
fn bound(field: &'static str, value: Option<&str>, end_of_day: bool) -> Result<Option<String>> {
    let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else { return Ok(None) };
    let bad = || StoreError::BadQuery {
        field,
        message: format!("`{value}` is not a date (2026-01-31) or a time (2026-01-31T12:00:00Z)"),
    };
    let date_format = time::macros::format_description!("[year]-[month]-[day]");
    if let Ok(date) = time::Date::parse(value, &date_format) {
        // "T24" sorts after every time of that day.
        return Ok(Some(format!("{date}{}", if end_of_day { "T24" } else { "" })));
    }
    let at = time::OffsetDateTime::parse(value, &time::format_description::well_known::Rfc3339).map_err(|_| bad())?;
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    at.to_offset(time::UtcOffset::UTC).format(&format).map(Some).map_err(|_| bad())
}

/// The matches of the index, filtered and ordered by `$order`. `?12`..`?13` bound the
/// rowids FTS5 walks: a topic's messages lie between its smallest and largest rowid, so a
/// search in one topic seeks there instead of walking every match in the database.
macro_rules! matched {
    ($order:literal) => {
        concat!(
            "SELECT m.id, m.topic_id, t.title, m.turn_id, m.role, m.provider_id, m.model_name, m.created_at, \
               snippet(message_search, 0, char(57344), char(57345), '…', 40) AS snippet, NULL AS body \
             FROM message_search \
             JOIN messages AS m ON m.rowid = message_search.rowid \
             JOIN topics AS t ON t.id = m.topic_id \
             WHERE message_search MATCH ?1 \
               AND message_search.rowid BETWEEN ?12 AND ?13 \
               AND (?2 = '[]' OR NOT EXISTS (SELECT 1 FROM json_each(?2) AS word \
                                             WHERE instr(lower(message_search.body), word.value) = 0)) \
               AND (?3 IS NULL OR m.topic_id = ?3) AND (?4 IS NULL OR m.role = ?4) \
               AND (?5 IS NULL OR m.model_name = ?5) \
               AND (?6 IS NULL OR m.created_at >= ?6) AND (?7 IS NULL OR m.created_at < ?7) \
               AND (?8 OR substr(m.topic_id, 1, length(?9)) != ?9) \
             ORDER BY ",
            $order,
            " LIMIT ?10 OFFSET ?11"
        )
    };
}

/// Best first (bm25). `ORDER BY rank` alone lets FTS5 sort inside the index, so SQLite
/// joins, filters and cuts snippets only until the page is full. Ranking costs a pass over
/// every match of each phrase, so it is used only when there are at most [`RANK_CAP`].
const RANKED: &str = matched!("rank");

/// Newest written first: FTS5 walks its lists backwards and stops once the page is full.
const NEWEST: &str = matched!("message_search.rowid DESC");

/// Whether the query matches more than [`RANK_CAP`] messages in the whole database: the
/// row after the cap, found without ranking anything. (Filters do not make ranking
/// cheaper: bm25 counts every message that holds each phrase, across the database.)
const BEYOND_CAP: &str = "SELECT rowid FROM message_search WHERE message_search MATCH ?1 \
     ORDER BY rowid DESC LIMIT 1 OFFSET ?2";

/// A query with more matches than this lists them newest first instead of ranking them:
/// bm25 walks every match of every phrase once per query, which made common words and
/// short prefixes slow (see docs/benchmarks.md).
const RANK_CAP: i64 = 1_000;

/// Every word is shorter than a trigram: a substring test on every row, newest first.
const SCANNED: &str = "SELECT m.id, m.topic_id, t.title, m.turn_id, m.role, m.provider_id, m.model_name, m.created_at, \
       NULL AS snippet, message_search.body AS body \
     FROM message_search \
     JOIN messages AS m ON m.rowid = message_search.rowid \
     JOIN topics AS t ON t.id = m.topic_id \
     WHERE ?1 IS NULL \
       AND message_search.rowid BETWEEN ?12 AND ?13 \
       AND NOT EXISTS (SELECT 1 FROM json_each(?2) AS word WHERE instr(lower(message_search.body), word.value) = 0) \
       AND (?3 IS NULL OR m.topic_id = ?3) AND (?4 IS NULL OR m.role = ?4) AND (?5 IS NULL OR m.model_name = ?5) \
       AND (?6 IS NULL OR m.created_at >= ?6) AND (?7 IS NULL OR m.created_at < ?7) \
       AND (?8 OR substr(m.topic_id, 1, length(?9)) != ?9) \
     ORDER BY m.created_at DESC, m.rowid DESC LIMIT ?10 OFFSET ?11";

/// The SQL that rebuilds the index from `messages` (after emptying it).
const REFILL: &str = "INSERT INTO message_search (rowid, body) SELECT message_rowid, body FROM message_search_text";
const RECREATE: [&str; 2] = [
    "DROP TABLE IF EXISTS message_search",
    "CREATE VIRTUAL TABLE message_search USING fts5 (body, tokenize = 'trigram case_sensitive 0 remove_diacritics 1')",
];

impl Store {
    /// Searches every message (see [`SearchRequest`]). A query in FTS5 syntax that FTS5
    /// cannot read, or a bad filter, is [`StoreError::BadQuery`].
    pub async fn search_messages(&self, request: &SearchRequest) -> Result<SearchResults> {
        match self.search_once(request).await {
            Err(StoreError::Database(err)) if crate::is_damage(&err) => {
                tracing::warn!(error = %err, "the search index is damaged; rebuilding it");
                self.rebuild_search_index().await?;
                self.search_once(request).await
            }
            other => other,
        }
    }

    async fn search_once(&self, request: &SearchRequest) -> Result<SearchResults> {
        let plan = plan(&request.query)?;
        let from = bound("from", request.from.as_deref(), false)?;
        let to = bound("to", request.to.as_deref(), true)?;
        let limit = request.limit.unwrap_or(DEFAULT_SEARCH_LIMIT).clamp(1, MAX_SEARCH_LIMIT);
        let offset = request.offset.unwrap_or(0);
        let role = request.role.map(|role| match role {
            MessageRole::User => "user",
            MessageRole::Assistant => "assistant",
            MessageRole::System => "system",
        });
        let short_words = serde_json::to_string(&plan.short_words).map_err(|e| StoreError::Encode(e.to_string()))?;
        let mut conn = self.pool().acquire().await?;
        let (low, high) = match &request.topic_id {
            Some(topic) => {
                let range: (Option<i64>, Option<i64>) =
                    sqlx::query_as("SELECT min(rowid), max(rowid) FROM messages WHERE topic_id = ?")
                        .bind(topic.as_str())
                        .fetch_one(&mut *conn)
                        .await?;
                // An unknown or empty topic: a range nothing is in.
                (range.0.unwrap_or(1), range.1.unwrap_or(0))
            }
            None => (i64::MIN, i64::MAX),
        };
        let sql = match plan.expression.as_deref() {
            None => SCANNED,
            Some(expression) => {
                let beyond: Option<i64> = sqlx::query_scalar(BEYOND_CAP)
                    .bind(expression)
                    .bind(RANK_CAP)
                    .fetch_optional(&mut *conn)
                    .await
                    .map_err(|err| query_error(err, &plan))?;
                if beyond.is_some() { NEWEST } else { RANKED }
            }
        };
        let rows = sqlx::query(sql)
            .bind(plan.expression.as_deref())
            .bind(short_words)
            .bind(request.topic_id.as_ref().map(TopicId::as_str))
            .bind(role)
            .bind(request.model.as_deref().filter(|m| !m.is_empty()))
            .bind(from)
            .bind(to)
            .bind(request.include_agent_sessions.unwrap_or(true))
            .bind(TopicId::AGENT_SESSION_PREFIX)
            // One more than asked: whether there is a next page.
            .bind(i64::from(limit) + 1)
            .bind(i64::from(offset))
            .bind(low)
            .bind(high)
            .fetch_all(&mut *conn)
            .await
            .map_err(|err| query_error(err, &plan))?;
        let more = rows.len() > limit as usize;
        let mut hits = rows.iter().take(limit as usize).map(|row| hit(row, &plan)).collect::<Result<Vec<_>>>()?;
        let mut active: HashMap<TopicId, HashSet<String>> = HashMap::new();
        for hit in &mut hits {
            if !active.contains_key(&hit.topic_id) {
                let ids = active_ids(&mut conn, &hit.topic_id).await?;
                active.insert(hit.topic_id.clone(), ids);
            }
            hit.on_active_path = active.get(&hit.topic_id).is_some_and(|ids| ids.contains(hit.message_id.as_str()));
        }
        Ok(SearchResults { hits, next_offset: more.then(|| offset.saturating_add(limit)) })
    }

    /// Compares the index with `messages` and rebuilds it when they differ. Returns
    /// whether it rebuilt. Run at every open: it reads only the rowids of both tables.
    pub async fn check_search_index(&self) -> Result<bool> {
        let mut conn = self.pool().acquire().await?;
        let messages: (i64, f64, i64) =
            sqlx::query_as("SELECT count(*), total(rowid), coalesce(max(rowid), 0) FROM messages")
                .fetch_one(&mut *conn)
                .await?;
        let indexed: std::result::Result<(i64, f64, i64), sqlx::Error> =
            sqlx::query_as("SELECT count(*), total(id), coalesce(max(id), 0) FROM message_search_docsize")
                .fetch_one(&mut *conn)
                .await;
        drop(conn);
        match indexed {
            Ok(indexed) if indexed == messages => Ok(false),
            Ok(indexed) => {
                tracing::warn!(?messages, ?indexed, "the search index does not match the messages; rebuilding it");
                self.rebuild_search_index().await?;
                Ok(true)
            }
            Err(err) => {
                tracing::warn!(error = %err, "the search index cannot be read; rebuilding it");
                self.rebuild_search_index().await?;
                Ok(true)
            }
        }
    }

    /// Builds the index again from `messages`, in one transaction. The table is dropped
    /// and created anew rather than emptied: emptying a damaged FTS5 table reads its
    /// damaged pages, and can leave some of them behind. The triggers on `messages` name
    /// the table, so they write to the new one.
    pub async fn rebuild_search_index(&self) -> Result<()> {
        let mut tx = self.write().await?;
        for statement in RECREATE {
            sqlx::query(statement).execute(&mut *tx).await?;
        }
        sqlx::query(REFILL).execute(&mut *tx).await?;
        tx.commit().await
    }
}

/// A statement's failure: the statements are fixed, so a syntax error is the user's FTS5
/// expression.
fn query_error(err: sqlx::Error, plan: &Plan) -> StoreError {
    match sqlite_code(&err) {
        Some(1) if plan.explicit => StoreError::BadQuery {
            field: "query",
            message: format!(
                "{} (leave out double quotes, parentheses and AND, OR, NOT, NEAR to search for plain words)",
                err.as_database_error().map(|e| e.message().to_owned()).unwrap_or_else(|| err.to_string())
            ),
        },
        _ => StoreError::from(err),
    }
}

/// The ids on a topic's active path (read from the tree alone, not the messages' parts).
async fn active_ids(conn: &mut SqliteConnection, topic_id: &TopicId) -> Result<HashSet<String>> {
    let nodes = tree::nodes(conn, topic_id.as_str()).await?;
    let steps = Tree::new(&nodes).path(Tip::Active).unwrap_or_default();
    Ok(steps.iter().map(|step| nodes[step.node].id.clone()).collect())
}

fn hit(row: &SqliteRow, plan: &Plan) -> Result<SearchHit> {
    let role = match row.try_get::<String, _>("role")?.as_str() {
        "user" => MessageRole::User,
        "system" => MessageRole::System,
        _ => MessageRole::Assistant,
    };
    let snippet = match row.try_get::<Option<String>, _>("snippet")? {
        Some(marked) => pieces(&marked),
        None => excerpt(&row.try_get::<Option<String>, _>("body")?.unwrap_or_default(), &plan.short_words),
    };
    Ok(SearchHit {
        topic_id: TopicId(row.try_get("topic_id")?),
        topic_title: row.try_get("title")?,
        message_id: MessageId(row.try_get("id")?),
        turn_id: row.try_get::<Option<String>, _>("turn_id")?.map(TurnId),
        role,
        model: model_ref(row.try_get("provider_id")?, row.try_get("model_name")?),
        created_at: row.try_get("created_at")?,
        snippet,
        on_active_path: false,
    })
}

/// Splits a snippet SQLite marked with [`HIT_START`]/[`HIT_END`] into pieces.
fn pieces(marked: &str) -> Vec<SnippetPiece> {
    let mut pieces: Vec<SnippetPiece> = Vec::new();
    let mut hit = false;
    let mut text = String::new();
    let mut flush = |text: &mut String, hit: bool| {
        if text.is_empty() {
            return;
        }
        let text = std::mem::take(text);
        match pieces.last_mut() {
            Some(last) if last.hit == hit => last.text.push_str(&text),
            _ => pieces.push(SnippetPiece { text, hit }),
        }
    };
    for c in marked.chars() {
        match c {
            HIT_START | HIT_END => {
                flush(&mut text, hit);
                hit = c == HIT_START;
            }
            // Line breaks separate parts; in a one-line excerpt a space reads better.
            '\n' | '\r' => text.push(' '),
            _ => text.push(c),
        }
    }
    flush(&mut text, hit);
    pieces
}

/// An excerpt of `body` around the first of `words` (already lowercase), each occurrence
/// of them marked: for hits found without the index, which cuts no snippet then.
fn excerpt(body: &str, words: &[String]) -> Vec<SnippetPiece> {
    let chars: Vec<char> = body.chars().collect();
    let lower: Vec<char> = chars.iter().map(|c| c.to_lowercase().next().unwrap_or(*c)).collect();
    let words: Vec<Vec<char>> =
        words.iter().map(|w| w.chars().collect()).filter(|w: &Vec<char>| !w.is_empty()).collect();
    let matches_at = |at: usize| words.iter().find(|w| lower[at..].starts_with(w)).map(Vec::len);
    let first = (0..chars.len()).find(|&at| matches_at(at).is_some()).unwrap_or(0);
    let start = first.saturating_sub(SNIPPET_CONTEXT / 2);
    let end = (start + SNIPPET_CONTEXT * 2).min(chars.len());
    let mut marked = String::new();
    if start > 0 {
        marked.push('…');
    }
    let mut at = start;
    while at < end {
        match matches_at(at) {
            Some(len) => {
                let stop = (at + len).min(end);
                marked.push(HIT_START);
                marked.extend(&chars[at..stop]);
                marked.push(HIT_END);
                at = stop;
            }
            None => {
                marked.push(chars[at]);
                at += 1;
            }
        }
    }
    if end < chars.len() {
        marked.push('…');
    }
    pieces(&marked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_words_are_quoted_and_short_words_are_tested_apart() {
        let plan = plan("  rust C++ is \"fun\" ").unwrap();
        assert!(plan.explicit, "a double quote is FTS5 syntax");
        let plan = plan_of("Rust C++ is a:b don't");
        assert_eq!(plan.expression.as_deref(), Some(r#""Rust" "C++" "a:b" "don't""#));
        assert_eq!(plan.short_words, vec!["is".to_owned()]);
        assert!(!plan.explicit);
        let only_short = plan_of("Go 中文");
        assert_eq!((only_short.expression, only_short.short_words), (None, vec!["go".to_owned(), "中文".to_owned()]));
        assert!(plan_of("rust OR python").explicit);
        assert!(matches!(super::plan("   "), Err(StoreError::BadQuery { field: "query", .. })));
    }

    fn plan_of(query: &str) -> Plan {
        plan(query).unwrap()
    }

    #[test]
    fn bounds_are_utc_and_a_date_covers_its_day() {
        assert_eq!(bound("from", Some("2026-01-31"), false).unwrap().as_deref(), Some("2026-01-31"));
        assert_eq!(bound("to", Some("2026-01-31"), true).unwrap().as_deref(), Some("2026-01-31T24"));
        assert_eq!(
            bound("from", Some("2026-01-31T12:00:00+02:00"), false).unwrap().as_deref(),
            Some("2026-01-31T10:00:00.000Z")
        );
        assert!(matches!(bound("to", Some("yesterday"), true), Err(StoreError::BadQuery { field: "to", .. })));
        assert_eq!(bound("to", Some(" "), true).unwrap(), None);
    }

    #[test]
    fn snippets_become_pieces() {
        let marked = format!("…the {HIT_START}pyth{HIT_END}on\nway");
        assert_eq!(
            pieces(&marked),
            vec![
                SnippetPiece { text: "…the ".into(), hit: false },
                SnippetPiece { text: "pyth".into(), hit: true },
                SnippetPiece { text: "on way".into(), hit: false },
            ]
        );
        let cut = excerpt("I like Go and go", &["go".to_owned()]);
        assert_eq!(cut.iter().filter(|p| p.hit).map(|p| p.text.as_str()).collect::<Vec<_>>(), vec!["Go", "go"]);
    }

    mod index {
        use protocol::{
            MessageId, MessageRole, MessageStatus, ModelRef, ProviderId, TopicId, TurnId, UiMessage, UiPart,
        };
        use serde_json::json;

        use crate::search::RANK_CAP;
        use crate::test_support::store;
        use crate::{AssistantSlot, Checkpoint, NewTurn, Store};
        use protocol::search::{SearchRequest, SearchResults};

        fn model(name: &str) -> ModelRef {
            ModelRef { provider_id: ProviderId("p".into()), model: name.into() }
        }

        async fn turn(store: &Store, topic: &TopicId, text: &str) -> (TurnId, MessageId, MessageId) {
            let (turn_id, user, reply) = (TurnId::new(), MessageId::new(), MessageId::new());
            store
                .insert_turn(&NewTurn {
                    topic_id: topic.clone(),
                    turn_id: turn_id.clone(),
                    user_message_id: user.clone(),
                    user_parts: UiMessage::user_text("", text).parts,
                    edit_of: None,
                    assistants: vec![AssistantSlot {
                        message_id: reply.clone(),
                        model: model("m"),
                        metadata: json!({}),
                    }],
                })
                .await
                .unwrap();
            (turn_id, user, reply)
        }

        async fn write(store: &Store, reply: &MessageId, status: MessageStatus, parts: Vec<UiPart>) {
            let message = UiMessage { id: reply.to_string(), role: MessageRole::Assistant, parts, metadata: None };
            let checkpoint = Checkpoint { message_id: reply.clone(), status, status_reason: None, message };
            store.write_checkpoints(&[checkpoint]).await.unwrap();
        }

        fn text(text: &str) -> UiPart {
            UiPart::Text { text: text.into(), state: None }
        }

        async fn search(store: &Store, query: &str) -> SearchResults {
            store.search_messages(&SearchRequest { query: query.into(), ..Default::default() }).await.unwrap()
        }

        async fn found(store: &Store, query: &str) -> Vec<MessageId> {
            search(store, query).await.hits.into_iter().map(|hit| hit.message_id).collect()
        }

        #[tokio::test]
        async fn the_index_follows_inserts_checkpoints_final_writes_and_deletes() {
            let (store, _dir) = store().await;
            let topic = store.create_topic("Snakes", None).await.unwrap();
            let (_, user, reply) = turn(&store, &topic.id, "Tell me about Python generators").await;
            assert_eq!(found(&store, "python").await, vec![user.clone()], "the user's text, any case");
            assert_eq!(found(&store, "gener").await, vec![user.clone()], "a prefix");

            write(&store, &reply, MessageStatus::Streaming, vec![text("A generator yields lazily")]).await;
            assert_eq!(found(&store, "yields").await, vec![reply.clone()], "a checkpoint of a streaming reply");
            write(
                &store,
                &reply,
                MessageStatus::Success,
                vec![
                    UiPart::Reasoning {
                        id: None,
                        text: "think about coroutines".into(),
                        state: None,
                        provider_metadata: None,
                    },
                    text("A generator yields values one at a time"),
                    UiPart::DynamicTool {
                        tool_name: "web_search".into(),
                        tool_call_id: "c1".into(),
                        state: protocol::message::ToolState::OutputAvailable,
                        input: Some(json!({"query": "itertools recipes"})),
                        output: None,
                        error_text: None,
                        approval: None,
                    },
                ],
            )
            .await;
            assert_eq!(found(&store, "one at a time").await, vec![reply.clone()], "the final text");
            assert_eq!(found(&store, "coroutines").await, vec![reply.clone()], "reasoning");
            assert_eq!(found(&store, "web_search itertools").await, vec![reply.clone()], "a tool's name and input");

            let results = search(&store, "lazily one").await;
            assert!(results.hits.is_empty(), "the checkpoint's words left with it: {results:?}");

            let hit = &search(&store, "yields").await.hits[0];
            assert_eq!(
                (hit.topic_title.as_str(), hit.role, hit.model.clone()),
                ("Snakes", MessageRole::Assistant, Some(model("m")))
            );
            assert!(hit.on_active_path);
            assert!(
                hit.snippet.iter().any(|piece| piece.hit && piece.text.eq_ignore_ascii_case("yields")),
                "{:?}",
                hit.snippet
            );

            store.delete_message(&topic.id, &user).await.unwrap();
            assert!(found(&store, "generator").await.is_empty(), "deleted with everything below it");

            let (_, user, _) = turn(&store, &topic.id, "a second question").await;
            assert_eq!(found(&store, "second").await, vec![user]);
            store.delete_topic(&topic.id).await.unwrap();
            assert!(found(&store, "second").await.is_empty(), "a topic's deletion cascades into the index");
        }

        #[tokio::test]
        async fn a_long_streaming_reply_is_indexed_per_4_kb_and_exactly_at_its_end() {
            let (store, _dir) = store().await;
            let topic = store.create_topic("t", None).await.unwrap();
            let (_, _, reply) = turn(&store, &topic.id, "write a lot").await;
            // Past the first 4 KB: each checkpoint adds a little, so most cross no boundary.
            let mut body = format!("opening albatross {}", "filler words here ".repeat(260));
            write(&store, &reply, MessageStatus::Streaming, vec![text(&body)]).await;
            assert_eq!(found(&store, "albatross").await, vec![reply.clone()], "indexed on its first crossing");
            body.push_str(" pelican");
            write(&store, &reply, MessageStatus::Streaming, vec![text(&body)]).await;
            assert!(found(&store, "pelican").await.is_empty(), "the last few bytes of a streaming reply lag");
            assert_eq!(found(&store, "albatross").await, vec![reply.clone()], "what was indexed stays found");
            while body.len() < 9000 {
                body.push_str(" filler words here");
                write(&store, &reply, MessageStatus::Streaming, vec![text(&body)]).await;
            }
            assert_eq!(found(&store, "pelican").await, vec![reply.clone()], "found once the reply crossed 8 KB");
            body.push_str(" cormorant");
            write(&store, &reply, MessageStatus::Streaming, vec![text(&body)]).await;
            assert!(found(&store, "cormorant").await.is_empty());
            write(&store, &reply, MessageStatus::Paused, vec![text(&body)]).await;
            assert_eq!(found(&store, "cormorant").await, vec![reply.clone()], "the final state is indexed exactly");
            assert!(!store.check_search_index().await.unwrap(), "the index still matches the messages");
        }

        #[tokio::test]
        async fn many_matches_are_listed_newest_first_few_by_relevance_and_a_topic_filter_holds() {
            let (store, _dir) = store().await;
            let topic = store.create_topic("t", None).await.unwrap();
            let (_, relevant, _) = turn(&store, &topic.id, "walrus walrus walrus walrus").await;
            let (_, plain, _) =
                turn(&store, &topic.id, "a long sentence that mentions a walrus only once, among many words").await;
            assert_eq!(found(&store, "walrus").await, vec![relevant.clone(), plain.clone()], "few matches: best first");

            // A long linear topic of one-message turns, written at once (the trigger indexes it).
            let other = store.create_topic("other", None).await.unwrap();
            store
                .write_raw(
                    sqlx::query(
                        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2) \
                         INSERT INTO messages (id, topic_id, turn_id, role, status, parts, created_at, updated_at) \
                         SELECT 'walrus-' || i, ?1, 'turn-' || i, 'user', 'success', \
                                json_array(json_object('type', 'text', 'text', 'walrus number ' || i)), \
                                '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z' \
                         FROM n",
                    )
                    .bind(other.id.as_str())
                    .bind(RANK_CAP),
                )
                .await
                .unwrap();
            let newest = MessageId(format!("walrus-{RANK_CAP}"));
            let hits = found(&store, "walrus").await;
            assert_eq!(hits.len(), 20);
            assert_eq!(hits.first(), Some(&newest), "beyond the cap: newest first");
            assert!(!hits.contains(&relevant), "the oldest, however relevant, is not on the first page");

            let in_topic = store
                .search_messages(&SearchRequest {
                    query: "walrus".into(),
                    topic_id: Some(topic.id.clone()),
                    ..Default::default()
                })
                .await
                .unwrap();
            let ids: Vec<MessageId> = in_topic.hits.into_iter().map(|hit| hit.message_id).collect();
            assert_eq!(ids, vec![plain, relevant], "a topic's own matches, newest first");
            let unknown = store
                .search_messages(&SearchRequest {
                    query: "walrus".into(),
                    topic_id: Some(TopicId("no-such-topic".into())),
                    ..Default::default()
                })
                .await
                .unwrap();
            assert!(unknown.hits.is_empty());
        }

        #[tokio::test]
        async fn versions_are_found_and_say_whether_they_are_shown() {
            let (store, _dir) = store().await;
            let topic = store.create_topic("t", None).await.unwrap();
            let (turn_id, _, first) = turn(&store, &topic.id, "question").await;
            write(&store, &first, MessageStatus::Success, vec![text("the elephant answer")]).await;
            let second = MessageId::new();
            store
                .insert_replies(
                    &topic.id,
                    &turn_id,
                    &[AssistantSlot { message_id: second.clone(), model: model("m"), metadata: json!({}) }],
                )
                .await
                .unwrap();
            write(&store, &second, MessageStatus::Success, vec![text("the giraffe answer")]).await;

            let hits = search(&store, "answer").await.hits;
            assert_eq!(hits.len(), 2);
            let shown: Vec<(MessageId, bool)> = hits.iter().map(|h| (h.message_id.clone(), h.on_active_path)).collect();
            assert!(shown.contains(&(first.clone(), false)) && shown.contains(&(second.clone(), true)), "{shown:?}");

            store.select_message(&topic.id, &first).await.unwrap();
            assert!(search(&store, "elephant").await.hits[0].on_active_path, "selected: shown now");

            let fork = store.fork_topic(&topic.id, &first).await.unwrap();
            let in_fork = store
                .search_messages(&SearchRequest {
                    query: "elephant".into(),
                    topic_id: Some(fork.id.clone()),
                    ..Default::default()
                })
                .await
                .unwrap();
            assert_eq!(in_fork.hits.len(), 1, "a fork's copies are indexed");
            assert_eq!(found(&store, "elephant").await.len(), 2);
        }

        #[tokio::test]
        async fn filters_short_words_cjk_paging_and_syntax_errors() {
            let (store, _dir) = store().await;
            let topic = store.create_topic("t", None).await.unwrap();
            let (_, user, reply) = turn(&store, &topic.id, "我喜欢用中文写代码 in Go").await;
            write(&store, &reply, MessageStatus::Success, vec![text("Go 是一门编程语言")]).await;
            assert_eq!(found(&store, "中文写").await, vec![user.clone()], "CJK, three characters");
            let both = found(&store, "Go").await;
            assert_eq!(both.len(), 2, "a two-letter word is found without the index: {both:?}");
            assert_eq!(found(&store, "中文").await, vec![user.clone()], "two CJK characters");
            assert_eq!(found(&store, "go 编程语言").await, vec![reply.clone()]);

            let only = |request: SearchRequest| {
                let store = store.clone();
                async move {
                    store
                        .search_messages(&request)
                        .await
                        .unwrap()
                        .hits
                        .into_iter()
                        .map(|h| h.message_id)
                        .collect::<Vec<_>>()
                }
            };
            let go = || SearchRequest { query: "go".into(), ..Default::default() };
            assert_eq!(only(SearchRequest { role: Some(MessageRole::User), ..go() }).await, vec![user.clone()]);
            assert_eq!(only(SearchRequest { model: Some("m".into()), ..go() }).await, vec![reply.clone()]);
            assert!(only(SearchRequest { to: Some("2000-01-01".into()), ..go() }).await.is_empty());
            assert_eq!(only(SearchRequest { from: Some("2000-01-01".into()), ..go() }).await.len(), 2);

            for i in 0..5 {
                turn(&store, &topic.id, &format!("paging word number {i}")).await;
            }
            let page = store
                .search_messages(&SearchRequest { query: "paging".into(), limit: Some(3), ..Default::default() })
                .await
                .unwrap();
            assert_eq!((page.hits.len(), page.next_offset), (3, Some(3)));
            let rest = store
                .search_messages(&SearchRequest {
                    query: "paging".into(),
                    limit: Some(3),
                    offset: Some(3),
                    ..Default::default()
                })
                .await
                .unwrap();
            assert_eq!((rest.hits.len(), rest.next_offset), (2, None));

            for bad in ["\"unterminated", "rust AND", "(python"] {
                let err = store
                    .search_messages(&SearchRequest { query: bad.into(), ..Default::default() })
                    .await
                    .unwrap_err();
                assert!(matches!(err, crate::StoreError::BadQuery { field: "query", .. }), "{bad}: {err:?}");
            }
            assert_eq!(found(&store, "\"paging word\" NOT number").await.len(), 0, "explicit operators work");
            assert_eq!(found(&store, "paging OR 中文写").await.len(), 6);
        }

        #[tokio::test]
        async fn a_damaged_index_is_rebuilt() {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("colloquy.db");
            let store = Store::open(&path).await.unwrap();
            let topic = store.create_topic("t", None).await.unwrap();
            let (_, user, _) = turn(&store, &topic.id, "remember the lighthouse").await;
            // A row missing from the index (as if written by a version without it).
            store.write_raw(sqlx::query("DELETE FROM message_search")).await.unwrap();
            assert!(found(&store, "lighthouse").await.is_empty());
            store.close().await;
            let store = Store::open(&path).await.unwrap();
            assert_eq!(found(&store, "lighthouse").await, vec![user.clone()], "rebuilt at open");
            assert!(!store.check_search_index().await.unwrap(), "consistent now");

            // The index's own pages damaged: the search that meets it rebuilds it.
            store
                .write_raw(sqlx::query("UPDATE message_search_data SET block = x'00ff00ff00ff' WHERE id > 1"))
                .await
                .unwrap();
            assert_eq!(found(&store, "lighthouse").await, vec![user], "rebuilt when found damaged");
        }
    }
}
