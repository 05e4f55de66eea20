//! Full-text search over messages.
//!
//! The index is two FTS5 tables (migration 0019), kept by SQL triggers on `messages`
//! (migration 0021) in the same transaction as every write, so it cannot fall behind a
//! committed message:
//!
//! - `message_words`: every message by its words (any case, accents ignored). A plain
//!   word is looked up as a prefix (`pyth` finds "Python"); prefixes of two and three
//!   characters have lists of their own, so a short word is one list too. The table
//!   holds no copy of the text: snippets are cut here from the page's messages.
//! - `message_cjk`: messages with text in a script written without spaces (Chinese,
//!   Japanese, Korean, Thai, …; see [`is_unspaced`]), by trigrams, so a word inside a run
//!   of such text is found. A query with such a word asks this table alone: only its
//!   messages can hold that word.
//!
//! At open, [`Store::check_search_index`] compares both tables with `messages` (row count,
//! sum and maximum of the rowids: a missing, extra or renumbered row shows) and rebuilds
//! them when they differ; a search that finds the index damaged (SQLite's
//! `SQLITE_CORRUPT`) rebuilds it and asks again.

use std::collections::{HashMap, HashSet};

use protocol::search::{DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, SearchHit, SearchRequest, SearchResults, SnippetPiece};
use protocol::{MessageId, MessageRole, TopicId, TurnId};
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqliteConnection};

use crate::topics::model_ref;
use crate::tree::{self, Tip, Tree};
use crate::{Result, Store, StoreError, sqlite_code};

/// Where a hit begins and ends in a marked excerpt (private-use characters, which message
/// text does not contain in practice and which never reach the client).
const HIT_START: char = '\u{E000}';
const HIT_END: char = '\u{E001}';

/// Characters of context around a hit in a snippet.
const SNIPPET_CONTEXT: usize = 60;

/// Whether `c` belongs to a script written without spaces between words, whose text
/// `message_cjk` indexes by trigrams. Mirrors the character class of the view
/// `unspaced_pattern` (migration 0021; 0019's `message_cjk_text`), which the view
/// `message_cjk_text` and the triggers use; a test checks that they agree.
pub(crate) fn is_unspaced(c: char) -> bool {
    matches!(
        c,
        '\u{0E00}'..='\u{0EFF}'         // Thai, Lao
            | '\u{1000}'..='\u{109F}'   // Myanmar
            | '\u{1780}'..='\u{17FF}'   // Khmer
            | '\u{2E80}'..='\u{9FFF}'   // CJK radicals, kana, ideographs
            | '\u{AC00}'..='\u{D7AF}'   // Hangul syllables
            | '\u{F900}'..='\u{FAFF}'   // CJK compatibility ideographs
            | '\u{FF66}'..='\u{FF9F}'   // half-width katakana
            | '\u{20000}'..='\u{2FFFF}' // CJK extensions B and later
    )
}

/// Which table a query asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Index {
    /// `message_words`: words and prefixes of every message.
    Words,
    /// `message_cjk`: substrings of the messages with unspaced text.
    Cjk,
    /// FTS5 syntax with unspaced text in it: each message is asked in the table that
    /// reads it best (`message_cjk` if it has unspaced text, else `message_words`).
    Both,
}

/// What a query asks the index.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    index: Index,
    /// The FTS5 expression; `None` when no word can be looked up (in `message_cjk`: every
    /// word is shorter than a trigram; in `message_words`: no word has a letter or digit).
    expression: Option<String>,
    /// Words of one or two characters every hit must contain (any case): `message_cjk`
    /// has no trigram for them. Each word is its spellings ([`spellings`]); a row holds
    /// the word when it holds one of them.
    short_words: Vec<Vec<String>>,
    /// What a snippet marks (lowercase).
    marks: Vec<String>,
    /// The user wrote FTS5 syntax: a mistake in it is theirs to fix.
    explicit: bool,
}

/// Reads a query. Plain words become quoted FTS5 strings (so `C++`, `don't` or `a:b` are
/// words, never syntax): prefixes in `message_words`, or, when any word has unspaced
/// text, substrings in `message_cjk`. A query with double quotes, parentheses or an
/// operator is passed to FTS5 as written.
pub(crate) fn plan(query: &str) -> Result<Plan> {
    let query = query.trim();
    if query.is_empty() {
        return Err(StoreError::BadQuery { field: "query", message: "type something to search for".into() });
    }
    let unspaced = query.chars().any(is_unspaced);
    let explicit = query.contains(['"', '(', ')'])
        || query.split_whitespace().any(|word| matches!(word, "AND" | "OR" | "NOT") || word.starts_with("NEAR("));
    if explicit {
        return Ok(Plan {
            index: if unspaced { Index::Both } else { Index::Words },
            expression: Some(query.to_owned()),
            short_words: Vec::new(),
            marks: terms(query),
            explicit,
        });
    }
    let quoted = |word: &str| format!("\"{}\"", word.replace('"', "\"\""));
    let marks = query.split_whitespace().map(str::to_lowercase).collect();
    if unspaced {
        // A trigram index, as 0014 asked it: words of three or more characters are
        // substrings in it, shorter ones a test of each row it found.
        let (long, short): (Vec<&str>, Vec<&str>) =
            query.split_whitespace().partition(|word| word.chars().count() >= 3);
        let expression = (!long.is_empty()).then(|| long.iter().map(|w| quoted(w)).collect::<Vec<_>>().join(" "));
        let short_words = short.into_iter().map(spellings).collect();
        return Ok(Plan { index: Index::Cjk, expression, short_words, marks, explicit });
    }
    // A word without a letter or digit has no token to look up.
    let words: Vec<String> = query
        .split_whitespace()
        .filter(|word| word.chars().any(char::is_alphanumeric))
        .map(|word| format!("{}*", quoted(word)))
        .collect();
    let expression = (!words.is_empty()).then(|| words.join(" "));
    Ok(Plan { index: Index::Words, expression, short_words: Vec::new(), marks, explicit })
}

/// The ways a short word can be written in a text that SQLite's `lower()` has lowered: that
/// lowers only ASCII, so a letter beyond it is looked for in either case (`öl` as `öl`,
/// `Öl`, `öL` after lowering: `öl` and `Öl`). A short word has at most two characters, so
/// at most four spellings.
fn spellings(word: &str) -> Vec<String> {
    let mut spellings = vec![String::new()];
    for c in word.chars() {
        let cases: Vec<String> = if c.is_ascii() {
            vec![c.to_ascii_lowercase().to_string()]
        } else {
            let (lower, upper) = (c.to_lowercase().to_string(), c.to_uppercase().to_string());
            if lower == upper { vec![lower] } else { vec![lower, upper] }
        };
        spellings = spellings.iter().flat_map(|head| cases.iter().map(move |case| format!("{head}{case}"))).collect();
    }
    spellings
}

/// The words of an FTS5 expression, lowercase, for snippets to mark (its operators and
/// punctuation left out).
fn terms(expression: &str) -> Vec<String> {
    expression
        .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '_')
        .filter(|word| !word.is_empty() && !matches!(*word, "AND" | "OR" | "NOT" | "NEAR"))
        .map(str::to_lowercase)
        .collect()
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

/// The columns of a hit, from `messages` (as `m`) and `topics` (as `t`).
macro_rules! hit_columns {
    () => {
        "SELECT m.rowid AS message_rowid, m.id, m.topic_id, t.title, m.turn_id, m.role, m.provider_id, \
           m.model_name, m.created_at "
    };
}

/// The filters every query applies to `m`: `?3` topic, `?4` role, `?5` model, `?6`..`?7`
/// dates, `?8`/`?9` agent sessions.
macro_rules! filters {
    () => {
        "AND (?3 IS NULL OR m.topic_id = ?3) AND (?4 IS NULL OR m.role = ?4) \
         AND (?5 IS NULL OR m.model_name = ?5) \
         AND (?6 IS NULL OR m.created_at >= ?6) AND (?7 IS NULL OR m.created_at < ?7) \
         AND (?8 OR substr(m.topic_id, 1, length(?9)) != ?9) "
    };
}

/// The matches of one table, filtered and ordered by `$order`. `?12`..`?13` bound the
/// rowids FTS5 walks: a topic's messages lie between its smallest and largest rowid, so a
/// search in one topic seeks there instead of walking every match in the database.
/// `$extra` tests what the index cannot (`?2`, the short words, in `message_cjk`).
macro_rules! matched {
    ($table:literal, $extra:expr, $order:literal) => {
        concat!(
            hit_columns!(),
            "FROM ",
            $table,
            " JOIN messages AS m ON m.rowid = ",
            $table,
            ".rowid JOIN topics AS t ON t.id = m.topic_id WHERE ",
            $table,
            " MATCH ?1 AND ",
            $table,
            ".rowid BETWEEN ?12 AND ?13 ",
            $extra,
            filters!(),
            "ORDER BY ",
            $order,
            " LIMIT ?10 OFFSET ?11"
        )
    };
}

/// Every short word (`?2`, a JSON list of each word's spellings) is in the row's text, any
/// case: one of its spellings is.
macro_rules! short_words_in {
    ($body:literal) => {
        concat!(
            "AND (?2 = '[]' OR NOT EXISTS (SELECT 1 FROM json_each(?2) AS word WHERE NOT EXISTS \
             (SELECT 1 FROM json_each(word.value) AS spelling WHERE instr(lower(",
            $body,
            "), spelling.value) > 0))) "
        )
    };
}

/// Best first (bm25). `ORDER BY rank` alone lets FTS5 sort inside the index, so SQLite
/// joins and filters only until the page is full. Ranking costs a pass over every match
/// of each phrase, so it is used only when there are at most [`RANK_CAP`].
const WORDS_RANKED: &str = matched!("message_words", "", "rank");
const CJK_RANKED: &str = matched!("message_cjk", short_words_in!("message_cjk.body"), "rank");

/// Newest written first: FTS5 walks its lists backwards and stops once the page is full.
const WORDS_NEWEST: &str = matched!("message_words", "", "message_words.rowid DESC");
const CJK_NEWEST: &str = matched!("message_cjk", short_words_in!("message_cjk.body"), "message_cjk.rowid DESC");

/// The newest `?2` matches of `message_words` (`?2` = [`RANK_CAP`] + 1), found in one walk
/// and without ranking anything: at most the cap, the query is worth ranking (filters do
/// not make ranking cheaper: bm25 counts every message that holds each phrase, across the
/// database); beyond it, the newest matches are likely to hold the page ([`AMONG`]).
/// One row: how many, and their rowids as a JSON list (one value, not a row each).
const WORDS_NEWEST_MATCHES: &str = "SELECT count(*), json_group_array(rowid) FROM \
     (SELECT rowid FROM message_words WHERE message_words MATCH ?1 ORDER BY rowid DESC LIMIT ?2)";

/// Whether the query matches more than [`RANK_CAP`] messages of `message_cjk`: the row
/// after the cap.
const CJK_BEYOND_CAP: &str = "SELECT rowid FROM message_cjk WHERE message_cjk MATCH ?1 \
     ORDER BY rowid DESC LIMIT 1 OFFSET ?2";

/// A page of the newest matches (`?1`: a JSON list of rowids) that pass the filters, newest
/// first. When it is full it is the page [`WORDS_NEWEST`] would give, without walking the
/// index again: every other match is older than all of these.
const AMONG: &str = concat!(
    hit_columns!(),
    "FROM messages AS m JOIN topics AS t ON t.id = m.topic_id \
     WHERE m.rowid IN (SELECT value FROM json_each(?1)) AND m.rowid BETWEEN ?12 AND ?13 ",
    filters!(),
    "ORDER BY m.rowid DESC LIMIT ?10 OFFSET ?11"
);

/// A query with more matches than this lists them newest first instead of ranking them:
/// bm25 walks every match of every phrase once per query, which made common words and
/// short prefixes slow (see docs/benchmarks.md).
const RANK_CAP: i64 = 1_000;

/// Every word of a query with unspaced text is shorter than a trigram: a substring test
/// of the texts `message_cjk` keeps (its `_content` table; the rows of other messages are
/// empty), newest written first, so the scan stops once the page is full. `CROSS JOIN`
/// keeps that order: SQLite may not reorder it.
const CJK_SCANNED: &str = concat!(
    hit_columns!(),
    "FROM message_cjk_content AS c CROSS JOIN messages AS m ON m.rowid = c.id \
       CROSS JOIN topics AS t ON t.id = m.topic_id \
     WHERE ?1 IS NULL AND c.id BETWEEN ?12 AND ?13 AND c.c0 != '' ",
    short_words_in!("c.c0"),
    filters!(),
    "ORDER BY c.id DESC LIMIT ?10 OFFSET ?11"
);

/// FTS5 syntax with unspaced text: `message_words` answers for the messages without such
/// text, `message_cjk` for those with it; newest first (the two tables' ranks do not
/// compare).
const BOTH_NEWEST: &str = concat!(
    hit_columns!(),
    "FROM (SELECT rowid FROM message_words WHERE message_words MATCH ?1 AND rowid BETWEEN ?12 AND ?13 \
             AND rowid NOT IN (SELECT id FROM message_cjk_content WHERE c0 != '') \
           UNION ALL \
           SELECT rowid FROM message_cjk WHERE message_cjk MATCH ?1 AND rowid BETWEEN ?12 AND ?13) AS found \
     JOIN messages AS m ON m.rowid = found.rowid JOIN topics AS t ON t.id = m.topic_id \
     WHERE 1 ",
    filters!(),
    "ORDER BY m.rowid DESC LIMIT ?10 OFFSET ?11"
);

/// The searchable text of the page's messages (`?1`: a JSON list of rowids), to cut
/// snippets from: `message_words` keeps no copy of it.
const BODIES: &str = "SELECT message_rowid, body FROM message_search_text \
     WHERE message_rowid IN (SELECT value FROM json_each(?1))";

/// The SQL that builds the index again (migration 0019's tables, filled from `messages`).
const REBUILD: [&str; 8] = [
    "DROP TABLE IF EXISTS message_words",
    "DROP TABLE IF EXISTS message_cjk",
    "CREATE VIRTUAL TABLE message_words USING fts5 (body, tokenize = 'unicode61 remove_diacritics 2', \
       prefix = '2 3', content = '', contentless_delete = 1)",
    "CREATE VIRTUAL TABLE message_cjk USING fts5 (body, tokenize = 'trigram case_sensitive 0 remove_diacritics 1')",
    "INSERT INTO message_words (rowid, body) SELECT message_rowid, body FROM message_search_text",
    "INSERT INTO message_cjk (rowid, body) SELECT message_rowid, body FROM message_cjk_text",
    "INSERT INTO message_words (message_words) VALUES ('optimize')",
    "INSERT INTO message_cjk (message_cjk) VALUES ('optimize')",
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
        let page = Page {
            short_words,
            topic_id: request.topic_id.as_ref().map(TopicId::as_str),
            role,
            model: request.model.as_deref().filter(|m| !m.is_empty()),
            from,
            to,
            include_agent_sessions: request.include_agent_sessions.unwrap_or(true),
            // One more than asked: whether there is a next page.
            limit: i64::from(limit) + 1,
            offset: i64::from(offset),
            low,
            high,
        };
        let rows = match (plan.index, plan.expression.as_deref()) {
            // Only words without letters or digits: nothing to look up.
            (Index::Words | Index::Both, None) => return Ok(SearchResults::default()),
            (Index::Cjk, None) => page.fetch(&mut conn, CJK_SCANNED, None).await,
            (Index::Both, Some(expression)) => page.fetch(&mut conn, BOTH_NEWEST, Some(expression)).await,
            (Index::Words, Some(expression)) => {
                let (count, newest): (i64, String) = sqlx::query_as(WORDS_NEWEST_MATCHES)
                    .bind(expression)
                    .bind(RANK_CAP + 1)
                    .fetch_one(&mut *conn)
                    .await
                    .map_err(|err| query_error(err, &plan))?;
                if count <= RANK_CAP {
                    page.fetch(&mut conn, WORDS_RANKED, Some(expression)).await
                } else if page.topic_id.is_some() {
                    // A topic's matches are seldom among the newest in the database.
                    page.fetch(&mut conn, WORDS_NEWEST, Some(expression)).await
                } else {
                    let among = page.fetch(&mut conn, AMONG, Some(&newest)).await?;
                    if among.len() as i64 == page.limit {
                        Ok(among)
                    } else {
                        page.fetch(&mut conn, WORDS_NEWEST, Some(expression)).await
                    }
                }
            }
            (Index::Cjk, Some(expression)) => {
                let beyond: Option<i64> = sqlx::query_scalar(CJK_BEYOND_CAP)
                    .bind(expression)
                    .bind(RANK_CAP)
                    .fetch_optional(&mut *conn)
                    .await
                    .map_err(|err| query_error(err, &plan))?;
                let sql = if beyond.is_some() { CJK_NEWEST } else { CJK_RANKED };
                page.fetch(&mut conn, sql, Some(expression)).await
            }
        }
        .map_err(|err| query_error(err, &plan))?;
        let more = rows.len() > limit as usize;
        let rows = &rows[..rows.len().min(limit as usize)];
        let rowids = rows.iter().map(|row| row.try_get::<i64, _>("message_rowid")).collect::<sqlx::Result<Vec<_>>>()?;
        let bodies = bodies(&mut conn, &rowids).await?;
        let mut hits = Vec::with_capacity(rows.len());
        for (row, rowid) in rows.iter().zip(&rowids) {
            let body = bodies.get(rowid).map(String::as_str).unwrap_or_default();
            hits.push(hit(row, excerpt(body, &plan.marks, plan.index == Index::Cjk))?);
        }
        let shown = active_ids(&mut conn, hits.iter().map(|hit| hit.topic_id.as_str())).await?;
        for hit in &mut hits {
            hit.on_active_path = shown.contains(hit.message_id.as_str());
        }
        Ok(SearchResults { hits, next_offset: more.then(|| offset.saturating_add(limit)) })
    }

    /// Compares the index with `messages` and rebuilds it when they differ. Returns
    /// whether it rebuilt. Run at every open: it reads only the rowids of the tables.
    pub async fn check_search_index(&self) -> Result<bool> {
        let mut conn = self.pool().acquire().await?;
        let messages: (i64, f64, i64) =
            sqlx::query_as("SELECT count(*), total(rowid), coalesce(max(rowid), 0) FROM messages")
                .fetch_one(&mut *conn)
                .await?;
        let mut differences = Vec::new();
        for table in ["message_words_docsize", "message_cjk_docsize"] {
            let indexed: std::result::Result<(i64, f64, i64), sqlx::Error> = sqlx::query_as(sqlx::AssertSqlSafe(
                format!("SELECT count(*), total(id), coalesce(max(id), 0) FROM {table}"),
            ))
            .fetch_one(&mut *conn)
            .await;
            match indexed {
                Ok(indexed) if indexed == messages => {}
                Ok(indexed) => differences.push(format!("{table}: {indexed:?}")),
                Err(err) => differences.push(format!("{table}: {err}")),
            }
        }
        drop(conn);
        if differences.is_empty() {
            return Ok(false);
        }
        tracing::warn!(?messages, ?differences, "the search index does not match the messages; rebuilding it");
        self.rebuild_search_index().await?;
        Ok(true)
    }

    /// Builds the index again from `messages`, in one transaction. The tables are dropped
    /// and created anew rather than emptied: emptying a damaged FTS5 table reads its
    /// damaged pages, and can leave some of them behind. The triggers on `messages` name
    /// the tables, so they write to the new ones.
    pub async fn rebuild_search_index(&self) -> Result<()> {
        let mut tx = self.write().await?;
        for statement in REBUILD {
            sqlx::query(statement).execute(&mut *tx).await?;
        }
        tx.commit().await
    }
}

/// What every page query binds besides `?1` (see [`filters!`] and [`matched!`]).
struct Page<'a> {
    /// `?2`: a JSON list.
    short_words: String,
    topic_id: Option<&'a str>,
    role: Option<&'static str>,
    model: Option<&'a str>,
    from: Option<String>,
    to: Option<String>,
    include_agent_sessions: bool,
    /// `?10`: the page's size and one more.
    limit: i64,
    offset: i64,
    low: i64,
    high: i64,
}

impl Page<'_> {
    async fn fetch(
        &self,
        conn: &mut SqliteConnection,
        sql: &'static str,
        first: Option<&str>,
    ) -> sqlx::Result<Vec<SqliteRow>> {
        sqlx::query(sql)
            .bind(first)
            .bind(self.short_words.as_str())
            .bind(self.topic_id)
            .bind(self.role)
            .bind(self.model)
            .bind(self.from.as_deref())
            .bind(self.to.as_deref())
            .bind(self.include_agent_sessions)
            .bind(TopicId::AGENT_SESSION_PREFIX)
            .bind(self.limit)
            .bind(self.offset)
            .bind(self.low)
            .bind(self.high)
            .fetch_all(conn)
            .await
    }
}

/// The searchable text of these messages, by rowid.
async fn bodies(conn: &mut SqliteConnection, rowids: &[i64]) -> Result<HashMap<i64, String>> {
    if rowids.is_empty() {
        return Ok(HashMap::new());
    }
    let list = serde_json::to_string(rowids).map_err(|e| StoreError::Encode(e.to_string()))?;
    let rows: Vec<(i64, String)> = sqlx::query_as(BODIES).bind(list).fetch_all(conn).await?;
    Ok(rows.into_iter().collect())
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

/// The ids on these topics' active paths, read in one statement from the tree alone (not
/// the messages' parts).
async fn active_ids<'a>(conn: &mut SqliteConnection, topics: impl Iterator<Item = &'a str>) -> Result<HashSet<String>> {
    let topics: Vec<&str> = topics.collect::<HashSet<_>>().into_iter().collect();
    if topics.is_empty() {
        return Ok(HashSet::new());
    }
    let list = serde_json::to_string(&topics).map_err(|e| StoreError::Encode(e.to_string()))?;
    let rows = sqlx::query(
        "SELECT topic_id, id, parent_id, role, provider_id, model_name, selected, status, status_reason \
         FROM messages WHERE topic_id IN (SELECT value FROM json_each(?)) ORDER BY rowid",
    )
    .bind(list)
    .fetch_all(conn)
    .await?;
    let mut by_topic: HashMap<String, Vec<tree::Node>> = HashMap::new();
    for row in &rows {
        by_topic.entry(row.try_get("topic_id")?).or_default().push(tree::node(row)?);
    }
    let mut shown = HashSet::new();
    for nodes in by_topic.values() {
        let steps = Tree::new(nodes).path(Tip::Active).unwrap_or_default();
        shown.extend(steps.iter().map(|step| nodes[step.node].id.clone()));
    }
    Ok(shown)
}

fn hit(row: &SqliteRow, snippet: Vec<SnippetPiece>) -> Result<SearchHit> {
    let role = match row.try_get::<String, _>("role")?.as_str() {
        "user" => MessageRole::User,
        "system" => MessageRole::System,
        _ => MessageRole::Assistant,
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
/// of them marked. A word is looked for where a word begins (as `message_words` found it:
/// by a prefix), or `anywhere` (as trigrams found it); a word of unspaced text, anywhere.
fn excerpt(body: &str, words: &[String], anywhere: bool) -> Vec<SnippetPiece> {
    let chars: Vec<char> = body.chars().collect();
    let lower: Vec<char> = chars.iter().map(|c| c.to_lowercase().next().unwrap_or(*c)).collect();
    let words: Vec<Vec<char>> =
        words.iter().map(|w| w.chars().collect()).filter(|w: &Vec<char>| !w.is_empty()).collect();
    let begins_word = |at: usize| at == 0 || !lower[at - 1].is_alphanumeric();
    let matches_at = |at: usize| {
        words
            .iter()
            .find(|w| lower[at..].starts_with(w) && (anywhere || is_unspaced(w[0]) || begins_word(at)))
            .map(Vec::len)
    };
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
    fn plain_words_are_quoted_prefixes_and_unspaced_text_asks_the_trigrams() {
        let plan = plan("  rust C++ is \"fun\" ").unwrap();
        assert!(plan.explicit, "a double quote is FTS5 syntax");
        assert_eq!(plan.index, Index::Words);
        let plan = plan_of("Rust C++ is a:b don't --");
        assert_eq!(plan.index, Index::Words);
        assert_eq!(plan.expression.as_deref(), Some(r#""Rust"* "C++"* "is"* "a:b"* "don't"*"#), "`--` has no word");
        assert!(plan.short_words.is_empty(), "short words are prefixes with lists of their own");
        assert!(!plan.explicit);
        assert_eq!(plan_of("?! --").expression, None);

        let cjk = plan_of("Go 编程语言");
        assert_eq!(cjk.index, Index::Cjk);
        assert_eq!((cjk.expression.as_deref(), cjk.short_words), (Some(r#""编程语言""#), vec![vec!["go".to_owned()]]));
        let only_short = plan_of("Go 中文");
        assert_eq!(
            (only_short.expression, only_short.short_words),
            (None, vec![vec!["go".to_owned()], vec!["中文".to_owned()]])
        );
        assert_eq!(spellings("ÖL"), vec!["öl", "Öl"], "ASCII is lowered in the text too");
        assert_eq!(spellings("éÉ"), vec!["éé", "éÉ", "Éé", "ÉÉ"]);

        assert!(plan_of("rust OR python").explicit);
        assert_eq!(plan_of("rust OR python").index, Index::Words);
        assert_eq!(plan_of("rust OR 中文写").index, Index::Both);
        assert_eq!(plan_of("\"paging word\" NOT number").marks, ["paging", "word", "number"]);
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
        let marked = |body: &str, words: &[&str], anywhere: bool| {
            let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
            let cut = excerpt(body, &words, anywhere);
            cut.into_iter().filter(|p| p.hit).map(|p| p.text).collect::<Vec<_>>()
        };
        assert_eq!(marked("I like Go and go, not Django", &["go"], false), ["Go", "go"], "where words begin");
        assert_eq!(marked("I like Go and Django", &["go"], true), ["Go", "go"], "anywhere");
        assert_eq!(marked("我们用中文讨论", &["中文"], false), ["中文"], "unspaced text: anywhere");
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
            // Case beyond ASCII: a short word is found however either side writes it.
            let (_, oil, _) = turn(&store, &topic.id, "Öl 和 Über 价格").await;
            for query in ["öl 价格", "ÖL 价格", "Öl 价格"] {
                assert_eq!(found(&store, query).await, vec![oil.clone()], "{query}");
            }
            assert!(found(&store, "öx 价格").await.is_empty());

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
            let mut store = Store::open(&path).await.unwrap();
            let topic = store.create_topic("t", None).await.unwrap();
            let (_, user, _) = turn(&store, &topic.id, "remember the lighthouse 灯塔守护者").await;
            // A row missing from either table (as if written by a version without it).
            for missing in
                ["DELETE FROM message_words WHERE rowid IN (SELECT rowid FROM messages)", "DELETE FROM message_cjk"]
            {
                store.write_raw(sqlx::query(missing)).await.unwrap();
                store.close().await;
                store = Store::open(&path).await.unwrap();
                assert_eq!(found(&store, "lighthouse").await, vec![user.clone()], "rebuilt at open: {missing}");
                assert_eq!(found(&store, "灯塔守").await, vec![user.clone()], "rebuilt at open: {missing}");
                assert!(!store.check_search_index().await.unwrap(), "consistent now");
            }

            // The index's own pages damaged: the search that meets it rebuilds it.
            for table in ["message_words", "message_cjk"] {
                store
                    .write_raw(sqlx::query(sqlx::AssertSqlSafe(format!(
                        "UPDATE {table}_data SET block = x'00ff00ff00ff' WHERE id > 1"
                    ))))
                    .await
                    .unwrap();
                assert_eq!(found(&store, "lighthouse 灯塔").await, vec![user.clone()], "rebuilt when found damaged");
                assert_eq!(found(&store, "lighth").await, vec![user.clone()], "rebuilt when found damaged");
            }
        }

        #[tokio::test]
        async fn the_unspaced_scripts_are_the_same_in_sql_and_rust() {
            let (store, _dir) = store().await;
            let topic = store.create_topic("t", None).await.unwrap();
            // Each range's ends and the characters just outside them.
            let ends = [
                (0x0E00, 0x0EFF),
                (0x1000, 0x109F),
                (0x1780, 0x17FF),
                (0x2E80, 0x9FFF),
                (0xAC00, 0xD7AF),
                (0xF900, 0xFAFF),
                (0xFF66, 0xFF9F),
                (0x20000, 0x2FFFF),
            ];
            let samples: Vec<char> = ends
                .iter()
                .flat_map(|&(low, high)| [low - 1, low, high, high + 1])
                .chain([u32::from('a'), u32::from('é'), u32::from('я')])
                .filter_map(char::from_u32)
                .collect();
            for (i, c) in samples.iter().enumerate() {
                store
                    .write_raw(
                        sqlx::query(
                            "INSERT INTO messages (id, topic_id, turn_id, role, status, parts, created_at, updated_at) \
                             VALUES (?1, ?2, ?1, 'user', 'success', json_array(json_object('type', 'text', 'text', ?3)), \
                                     'x', 'x')",
                        )
                        .bind(format!("c{i}"))
                        .bind(topic.id.as_str())
                        .bind(format!("x{c}y")),
                    )
                    .await
                    .unwrap();
                let in_sql: bool = sqlx::query_scalar(
                    "SELECT body != '' FROM message_cjk WHERE rowid = (SELECT rowid FROM messages WHERE id = ?)",
                )
                .bind(format!("c{i}"))
                .fetch_one(store.pool())
                .await
                .unwrap();
                assert_eq!(in_sql, super::super::is_unspaced(*c), "U+{:04X}", u32::from(*c));
            }
            // The update trigger's own test of the raw parts (0021), both ways: a message
            // that gains the character, then loses it again.
            async fn in_cjk(store: &Store, id: &str) -> String {
                sqlx::query_scalar(
                    "SELECT body FROM message_cjk WHERE rowid = (SELECT rowid FROM messages WHERE id = ?)",
                )
                .bind(id)
                .fetch_one(store.pool())
                .await
                .unwrap()
            }
            async fn set_text(store: &Store, id: &str, text: &str) {
                let update =
                    "UPDATE messages SET parts = json_array(json_object('type', 'text', 'text', ?1)) WHERE id = ?2";
                store.write_raw(sqlx::query(update).bind(text.to_owned()).bind(id.to_owned())).await.unwrap();
            }
            for (i, c) in samples.iter().enumerate() {
                let id = format!("c{i}");
                set_text(&store, &id, "plain").await;
                assert_eq!(in_cjk(&store, &id).await, "", "U+{:04X} left: its row is empty", u32::from(*c));
                set_text(&store, &id, &format!("x{c}y")).await;
                assert_eq!(
                    !in_cjk(&store, &id).await.is_empty(),
                    super::super::is_unspaced(*c),
                    "U+{:04X}",
                    u32::from(*c)
                );
            }
            // Written as a JSON escape rather than the character itself: still indexed.
            store
                .write_raw(sqlx::query(
                    r#"UPDATE messages SET parts = '[{"type":"text","text":"\u4e2d\u6587"}]' WHERE id = 'c0'"#,
                ))
                .await
                .unwrap();
            assert_eq!(in_cjk(&store, "c0").await, "中文");
            assert!(!store.check_search_index().await.unwrap(), "the index still matches the messages");
        }

        #[tokio::test]
        async fn a_database_from_0019_keeps_its_index_and_writes_cheaper() {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("colloquy.db");
            let url = format!("sqlite:{}?mode=rwc", path.display());
            let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
            crate::MIGRATOR.run_to(19, &pool).await.unwrap();
            sqlx::query("INSERT INTO topics (id, title, created_at, updated_at) VALUES ('t', 'old', 'x', 'x')")
                .execute(&pool)
                .await
                .unwrap();
            let long = format!("a streaming answer about albatross {}", "filler words here ".repeat(260));
            let rows = [
                ("u1", "user", None, "success", "Tell me about Python generators".to_owned()),
                ("a1", "assistant", Some("m"), "success", "我们用中文讨论全文检索 and itertools".to_owned()),
                ("a2", "assistant", Some("m"), "streaming", long.clone()),
            ];
            for (id, role, model, status, text) in rows {
                sqlx::query(
                    "INSERT INTO messages (id, topic_id, turn_id, role, status, provider_id, model_name, parts, \
                       created_at, updated_at) \
                     VALUES (?1, 't', ?1, ?2, ?3, ?4, ?5, json_array(json_object('type', 'text', 'text', ?6)), 'x', 'x')",
                )
                .bind(id)
                .bind(role)
                .bind(status)
                .bind(model.map(|_| "p"))
                .bind(model)
                .bind(text)
                .execute(&pool)
                .await
                .unwrap();
            }
            pool.close().await;

            let store = Store::open(&path).await.unwrap();
            assert!(!store.check_search_index().await.unwrap(), "0019's rows are kept as they are");
            let id = |s: &str| MessageId(s.into());
            assert_eq!(found(&store, "pyth gener").await, vec![id("u1")]);
            assert_eq!(found(&store, "全文检索").await, vec![id("a1")]);
            assert_eq!(found(&store, "albatross").await, vec![id("a2")]);

            // The streaming reply grows by a few bytes: its row lags (0016), then a write of
            // its status alone ends it, and the row catches up.
            let reply = id("a2");
            write(&store, &reply, MessageStatus::Streaming, vec![text(&format!("{long} pelican"))]).await;
            assert!(found(&store, "pelican").await.is_empty(), "the last few bytes of a streaming reply lag");
            store.write_raw(sqlx::query("UPDATE messages SET status = 'paused' WHERE id = 'a2'")).await.unwrap();
            assert_eq!(found(&store, "pelican").await, vec![reply.clone()], "leaving streaming re-indexes it");

            // The CJK reply loses its unspaced text: its trigram row empties.
            write(&store, &id("a1"), MessageStatus::Success, vec![text("only itertools now")]).await;
            assert!(found(&store, "全文检索").await.is_empty());
            assert_eq!(found(&store, "itertools").await, vec![id("a1")]);
            assert!(!store.check_search_index().await.unwrap(), "consistent after the writes");
        }

        #[tokio::test]
        async fn a_database_from_before_the_word_index_opens_with_it_and_finds_everything() {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("colloquy.db");
            let url = format!("sqlite:{}?mode=rwc", path.display());
            let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
            crate::MIGRATOR.run_to(17, &pool).await.unwrap();
            sqlx::query("INSERT INTO topics (id, title, created_at, updated_at) VALUES ('t', 'old', 'x', 'x')")
                .execute(&pool)
                .await
                .unwrap();
            let rows = [
                ("u1", "user", None, "success", "Tell me about Python generators"),
                ("a1", "assistant", Some("m"), "success", "我们用中文讨论全文检索 and itertools"),
                ("u2", "user", None, "success", "and what about Go?"),
                ("a2", "assistant", Some("m"), "streaming", "A goroutine is a lightweight thread"),
            ];
            for (id, role, model, status, text) in rows {
                sqlx::query(
                    "INSERT INTO messages (id, topic_id, turn_id, role, status, provider_id, model_name, parts, \
                       created_at, updated_at) \
                     VALUES (?1, 't', ?1, ?2, ?3, ?4, ?5, json_array(json_object('type', 'text', 'text', ?6)), 'x', 'x')",
                )
                .bind(id)
                .bind(role)
                .bind(status)
                .bind(model.map(|_| "p"))
                .bind(model)
                .bind(text)
                .execute(&pool)
                .await
                .unwrap();
            }
            pool.close().await;

            let store = Store::open(&path).await.unwrap();
            assert!(!store.check_search_index().await.unwrap(), "the migration built both tables");
            let id = |s: &str| MessageId(s.into());
            assert_eq!(found(&store, "pyth gener").await, vec![id("u1")], "prefixes");
            assert_eq!(found(&store, "检索").await, vec![id("a1")], "two unspaced characters");
            assert_eq!(found(&store, "全文检索").await, vec![id("a1")], "unspaced text inside a run");
            assert_eq!(found(&store, "itertools 中文").await, vec![id("a1")], "mixed");
            assert_eq!(found(&store, "goroutine").await, vec![id("a2")], "a reply that was streaming");
            let go = found(&store, "go").await;
            assert_eq!(go.len(), 2, "a two-letter word, from its prefix list: {go:?}");

            // The streaming reply goes on: a checkpoint re-indexes it (it is small).
            let reply = id("a2");
            write(&store, &reply, MessageStatus::Streaming, vec![text("A goroutine is a lightweight thread 协程")])
                .await;
            assert_eq!(found(&store, "协程").await, vec![reply.clone()], "its checkpoint, with unspaced text now");
            assert_eq!(found(&store, "lightweight").await, vec![reply], "still found by its words");
        }
    }
}
