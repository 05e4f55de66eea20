//! Persistence on SQLite in WAL mode.
//!
//! - [`Store`]: the pool, opened once per process; migrations from `/migrations` run at open.
//! - [`topics`], [`messages`], [`providers`], [`inbox`], [`assistants`], [`tools`]: one
//!   repository module per table family ([`tools`] holds the policy rules, the tool-call
//!   ledger, approvals and the audit log; [`mcp`] the MCP servers and their cached tools;
//!   [`sessions`] the agent sessions; [`settings`] the app-wide settings; [`usage`] the
//!   usage ledger and the prices the user set).
//! - `search`: the full-text index of messages and [`Store::search_messages`].
//! - [`secrets`]: where API keys and MCP servers' variable and header values live (never in
//!   the database).
//!
//! Rows written by an older or damaged version never make a read fail as a whole: a
//! message whose JSON cannot be parsed comes back with a `data-error` part saying so.

/// The columns every read of a message selects (a macro so queries stay `&'static str`).
macro_rules! message_columns {
    () => {
        "id, topic_id, parent_id, turn_id, role, status, status_reason, provider_id, model_name, parts, metadata, revision, selected, created_at, updated_at"
    };
}

pub mod acp;
mod api_error;
pub mod archive;
pub mod assistants;
mod branches;
pub mod inbox;
mod lists;
pub mod mcp;
pub mod messages;
mod pages;
pub mod providers;
mod search;
pub mod secrets;
pub mod sessions;
pub mod settings;
pub mod tools;
pub mod topics;
mod tree;
pub mod usage;

use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::Sqlite;
use sqlx::pool::PoolConnection;
use sqlx::sqlite::{
    SqliteArguments, SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteSynchronous,
};
use tokio::sync::{Mutex, OwnedMutexGuard};

pub use api_error::{DATABASE_DAMAGED, DATABASE_NEWER};
pub use lists::ListWatcher;
pub use messages::{AssistantSlot, Checkpoint, NewTurn};
pub use pages::PathPage;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations");

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{what} {id} not found")]
    NotFound { what: &'static str, id: String },
    /// The row was written since the caller read it.
    #[error("{what} {id} changed since it was read")]
    Changed { what: &'static str, id: String },
    /// The disk holding the database has no space left (SQLite's `SQLITE_FULL`). Nothing
    /// stored is lost: the write that failed was rolled back, and writing works again as
    /// soon as there is space.
    #[error("the disk is full: free some space on the disk that holds Colloquy's data folder, then try again")]
    DiskFull,
    #[error("database error: {0}")]
    Database(sqlx::Error),
    #[error("database migration failed: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
    /// The change is not possible as things stand (a reply in it is streaming); the
    /// message says why and what to do.
    #[error("{0}")]
    Refused(String),
    /// A search the index cannot answer as asked: the field and what is wrong with it.
    #[error("{field}: {message}")]
    BadQuery { field: &'static str, message: String },
    /// Data given to the store (an imported file) does not hold together; the message
    /// says what is wrong.
    #[error("{0}")]
    Invalid(String),
    #[error("could not encode {0}")]
    Encode(String),
    #[error("{0}")]
    Io(String),
    /// The database file cannot be used by this version: damaged, or written by a newer
    /// version. Nothing was changed in it; [`move_aside`] keeps it and makes room for a
    /// fresh one.
    #[error("the database {} {problem}", path.display())]
    Unusable { path: PathBuf, problem: Unusable },
}

/// Why a database file cannot be opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unusable {
    /// SQLite finds it damaged, or not a database at all (the reason as SQLite says it).
    Damaged(String),
    /// It has schema changes this version does not know (migration `version`).
    Newer { version: i64 },
}

impl std::fmt::Display for Unusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unusable::Damaged(reason) => write!(f, "is damaged ({reason})"),
            Unusable::Newer { version } => write!(
                f,
                "was written by a newer version of Colloquy (it has schema change {version}, which this version does not know); update Colloquy to open it"
            ),
        }
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(err: sqlx::Error) -> Self {
        if is_disk_full(&err) { StoreError::DiskFull } else { StoreError::Database(err) }
    }
}

/// SQLite's primary result code of a database error (extended codes stripped).
fn sqlite_code(err: &sqlx::Error) -> Option<i32> {
    err.as_database_error().and_then(|e| e.code()).and_then(|code| code.parse::<i32>().ok()).map(|code| code & 0xff)
}

/// SQLite's `SQLITE_FULL`.
fn is_disk_full(err: &sqlx::Error) -> bool {
    sqlite_code(err) == Some(13)
}

/// SQLite's `SQLITE_CORRUPT` or `SQLITE_NOTADB`.
fn is_damage(err: &sqlx::Error) -> bool {
    matches!(sqlite_code(err), Some(11 | 26))
}

/// An error opening the database at `path`, told as [`StoreError::Unusable`] when the
/// file itself is the problem.
fn opening_error(path: &Path, err: StoreError) -> StoreError {
    let problem = match &err {
        StoreError::Migration(sqlx::migrate::MigrateError::VersionMissing(version)) => {
            Unusable::Newer { version: *version }
        }
        StoreError::Database(e)
        | StoreError::Migration(
            sqlx::migrate::MigrateError::Execute(e) | sqlx::migrate::MigrateError::ExecuteMigration(e, _),
        ) if is_damage(e) => {
            Unusable::Damaged(e.as_database_error().map(|d| d.message().to_owned()).unwrap_or_else(|| e.to_string()))
        }
        _ => return err,
    };
    StoreError::Unusable { path: path.to_owned(), problem }
}

/// Moves a database this version cannot use out of the way, never deleting it: the file
/// (and its `-wal`/`-shm`, which belong to it) get the suffix `.unusable-<UTC time>`.
/// Returns the file's new path; a fresh database can then be created at `path`.
pub fn move_aside(path: &Path) -> std::io::Result<PathBuf> {
    move_aside_as(path, "unusable")
}

/// Renames the database file (and its `-wal`/`-shm`) with the suffix `.<label>-<UTC
/// time>`, never over an existing file. Returns the new path.
pub fn move_aside_as(path: &Path, label: &str) -> std::io::Result<PathBuf> {
    let format = time::macros::format_description!("[year][month][day]T[hour][minute][second]Z");
    let stamp = time::OffsetDateTime::now_utc().format(&format).unwrap_or_else(|_| "old".to_owned());
    let with = |base: &Path, suffix: &str| {
        let mut name = base.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    let mut target = with(path, &format!(".{label}-{stamp}"));
    let mut n = 1;
    while target.exists() {
        n += 1;
        target = with(path, &format!(".{label}-{stamp}-{n}"));
    }
    std::fs::rename(path, &target)?;
    for suffix in ["-wal", "-shm"] {
        let companion = with(path, suffix);
        if companion.exists() {
            std::fs::rename(&companion, with(&target, suffix))?;
        }
    }
    Ok(target)
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// How long SQLite's busy handler waits for a lock held by another connection. Our own
/// writes never wait in it (they take turns first, see `Store::write`); it covers another
/// process on the same file and SQLite's own checkpoints.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The database. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    pool: SqlitePool,
    /// Write transactions take turns here before they ask SQLite for its write lock.
    writers: Arc<Mutex<()>>,
    /// A file-size cap tests set to make SQLite answer "disk full" for real.
    page_limit: Arc<PageLimit>,
    /// Topics' active paths as last worked out (`pages.rs`).
    paths: Arc<pages::PathCache>,
    /// Told of every write that changes a list (`lists.rs`).
    lists: Arc<lists::ListWatch>,
}

impl Store {
    /// Opens (creating if needed) the database file and brings its schema up to date. A
    /// file that is damaged or from a newer version is [`StoreError::Unusable`].
    pub async fn open(path: &Path) -> Result<Self> {
        Self::open_file(path, BUSY_TIMEOUT).await.map_err(|err| opening_error(path, err))
    }

    async fn open_file(path: &Path, busy_timeout: Duration) -> Result<Self> {
        if let Some(dir) = path.parent() {
            // The pool would fail with an unhelpful "unable to open database file".
            let _ = std::fs::create_dir_all(dir);
        }
        // Conversations are the user's alone. SQLite gives the WAL and shared-memory files
        // the database file's mode, so creating it 0600 covers them; files an older
        // version left readable by others are tightened.
        private_files(path).map_err(|e| StoreError::Io(format!("cannot make {} private: {e}", path.display())))?;
        let options = SqliteConnectOptions::from_str("sqlite:")?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(busy_timeout);
        let page_limit = Arc::new(PageLimit::default());
        let (on_connect, on_acquire) = (page_limit.clone(), page_limit.clone());
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            // A connection whose COMMIT or ROLLBACK failed (a full disk makes SQLite roll
            // the transaction back on its own, so the ROLLBACK sqlx sends on drop fails
            // too) still counts as inside a transaction: pooled again, every later
            // `BEGIN` on it would fail. Such a connection is closed instead, and the pool
            // opens a fresh one.
            .after_release(|connection, _| {
                Box::pin(async move {
                    // Waits for the ROLLBACK a dropped transaction queued on the connection.
                    sqlx::Connection::ping(&mut *connection).await?;
                    let clean = !sqlx::Connection::is_in_transaction(&*connection);
                    if !clean {
                        tracing::warn!("a database connection is still inside a failed transaction; closing it");
                    }
                    Ok(clean)
                })
            })
            .after_connect(move |connection, _| {
                let limit = on_connect.clone();
                Box::pin(async move { limit.apply(connection).await })
            })
            .before_acquire(move |connection, _| {
                let limit = on_acquire.clone();
                Box::pin(async move { limit.apply(connection).await.map(|()| true) })
            })
            .connect_with(options)
            .await?;
        if let Err(err) = MIGRATOR.run(&pool).await {
            // Nothing of this file stays open: the caller may move it aside.
            pool.close().await;
            return Err(err.into());
        }
        let store =
            Self { pool, writers: Arc::new(Mutex::new(())), page_limit, paths: Arc::default(), lists: Arc::default() };
        // Searching is not worth refusing to open for: a failed check is said, and a
        // search that meets a damaged index rebuilds it then.
        if let Err(err) = store.check_search_index().await {
            tracing::warn!(error = %err, "could not check the search index");
        }
        Ok(store)
    }

    /// Fault injection for tests: caps the database file at its current size (`true`),
    /// so every write that needs a new page fails with SQLite's own "database or disk is
    /// full", exactly as on a full disk; `false` gives the space back. Every connection
    /// picks the cap up before its next use.
    #[doc(hidden)]
    pub async fn simulate_full_disk(&self, full: bool) -> Result<()> {
        let pages = if full {
            sqlx::query_scalar::<_, i64>("PRAGMA page_count").fetch_one(&self.pool).await?
        } else {
            PageLimit::UNLIMITED
        };
        self.page_limit.pages.store(pages, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    /// Fault injection for tests: one statement written in this process's turn (like every
    /// write), to leave rows as only a crash or an older version would. Returns how many
    /// rows it changed.
    #[doc(hidden)]
    pub async fn write_raw(&self, statement: sqlx::query::Query<'_, Sqlite, SqliteArguments>) -> Result<u64> {
        Ok(statement.execute(&mut *self.writer().await?).await?.rows_affected())
    }

    /// The pool, for reads. Every write takes this process's turn to write instead
    /// ([`Store::write`] or [`Store::writer`]), so none ever waits in SQLite's busy handler
    /// for another of ours.
    pub(crate) fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Rewrites the database file without the pages deleted or replaced rows left behind
    /// (SQLite keeps their old bytes until reused) and empties the WAL: after a secret was
    /// moved out of a row, no copy of it stays on disk. It writes, so it takes the turn.
    /// A consistent copy of the whole database in a new file at `path` (`VACUUM INTO`),
    /// made on a read connection: writers go on meanwhile (WAL). The file must not exist.
    /// It holds no secret (keys are never in the database).
    pub async fn backup_to(&self, path: &Path) -> Result<()> {
        let target = path.to_str().ok_or_else(|| StoreError::Io(format!("{} is not UTF-8", path.display())))?;
        sqlx::query("VACUUM INTO ?").bind(target).execute(self.pool()).await?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
                .map_err(|e| StoreError::Io(e.to_string()))?;
        }
        Ok(())
    }

    pub async fn compact(&self) -> Result<()> {
        let mut writer = self.writer().await?;
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&mut *writer).await?;
        sqlx::query("VACUUM").execute(&mut *writer).await?;
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&mut *writer).await?;
        Ok(())
    }

    /// A write transaction. It takes SQLite's write lock at `BEGIN`, so a read inside it
    /// never has to be upgraded to a write (which fails at once with "database is locked"
    /// when another connection wrote meanwhile). Write transactions queue in order on an
    /// async lock first: SQLite's own wait for a busy lock sleeps in steps of up to 100 ms
    /// while holding a pooled connection, which starves everyone when many turns open at
    /// once.
    pub(crate) async fn write(&self) -> Result<WriteTransaction> {
        let turn = self.writers.clone().lock_owned().await;
        let transaction = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        Ok(WriteTransaction { transaction, _turn: turn })
    }

    /// This process's turn to write, on a pooled connection in autocommit mode: for a
    /// single statement, which then never competes with a write transaction for SQLite's
    /// lock (see `write`). Use it as a temporary, `.execute(&mut *self.writer().await?)`,
    /// so the turn ends with the statement. Never call it while holding a
    /// `WriteTransaction`: the turn is not reentrant.
    pub(crate) async fn writer(&self) -> Result<Writer> {
        let turn = self.writers.clone().lock_owned().await;
        let connection = self.pool.acquire().await?;
        Ok(Writer { connection, _turn: turn })
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// Creates the database file readable by the user only, and takes away what others may
/// do with it and its `-wal`/`-shm` files if they exist.
fn private_files(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        std::fs::OpenOptions::new().create(true).truncate(false).write(true).mode(0o600).open(path)?;
        for suffix in ["", "-wal", "-shm"] {
            let mut file = path.as_os_str().to_owned();
            file.push(suffix);
            match std::fs::metadata(&file) {
                Ok(meta) if meta.permissions().mode() & 0o077 != 0 => {
                    let mode = meta.permissions().mode() & 0o600;
                    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode))?;
                }
                Ok(_) => {}
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => return Err(err),
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// The `max_page_count` every connection is held to: unset (the usual case: nothing is
/// run), or a number of pages set by [`Store::simulate_full_disk`].
#[derive(Debug, Default)]
struct PageLimit {
    /// 0: never set.
    pages: std::sync::atomic::AtomicI64,
}

impl PageLimit {
    /// SQLite's own default cap (it clamps anything larger).
    const UNLIMITED: i64 = 4_294_967_294;

    async fn apply(&self, connection: &mut SqliteConnection) -> Result<(), sqlx::Error> {
        let pages = self.pages.load(std::sync::atomic::Ordering::SeqCst);
        if pages > 0 {
            sqlx::query(sqlx::AssertSqlSafe(format!("PRAGMA max_page_count = {pages}"))).execute(connection).await?;
        }
        Ok(())
    }
}

/// A write transaction holding this process's turn to write. Used like sqlx's
/// `Transaction` (`&mut *tx` is the connection); dropped without `commit`, it rolls back.
pub(crate) struct WriteTransaction {
    transaction: sqlx::Transaction<'static, sqlx::Sqlite>,
    _turn: OwnedMutexGuard<()>,
}

impl WriteTransaction {
    pub(crate) async fn commit(self) -> Result<()> {
        Ok(self.transaction.commit().await?)
    }
}

impl Deref for WriteTransaction {
    type Target = SqliteConnection;

    fn deref(&self) -> &SqliteConnection {
        &self.transaction
    }
}

impl DerefMut for WriteTransaction {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        &mut self.transaction
    }
}

/// A pooled connection holding this process's turn to write (see `Store::writer`).
pub(crate) struct Writer {
    connection: PoolConnection<Sqlite>,
    _turn: OwnedMutexGuard<()>,
}

impl Deref for Writer {
    type Target = SqliteConnection;

    fn deref(&self) -> &SqliteConnection {
        &self.connection
    }
}

impl DerefMut for Writer {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        &mut self.connection
    }
}

/// Now, as RFC 3339 with milliseconds in UTC: sortable as text.
pub fn now() -> String {
    timestamp(time::OffsetDateTime::now_utc())
}

/// A moment as [`now`] writes it.
pub fn timestamp(at: time::OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    at.format(&format).unwrap_or_else(|_| at.unix_timestamp().to_string())
}

/// A moment [`now`] or [`timestamp`] wrote; `None` for text in another shape.
pub fn parse_timestamp(text: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::Store;

    pub async fn store() -> (Store, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("colloquy.db")).await.unwrap();
        (store, dir)
    }

    /// A store whose connections have no busy handler (`busy_timeout` 0): a statement that
    /// would have waited in it for a lock fails at once with `SQLITE_BUSY` instead.
    pub async fn store_without_busy_wait() -> (Store, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_file(&dir.path().join("colloquy.db"), std::time::Duration::ZERO).await.unwrap();
        (store, dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{store, store_without_busy_wait};
    use crate::tools::{CallDecision, NewCall, Recorded};
    use protocol::{MessageId, ModelRef, ProviderId, TopicId, TurnId, UiMessage};

    /// A turn written in one transaction (`Store::write`), the way `stream_open` admits one.
    fn turn(topic: &TopicId, text: &str) -> NewTurn {
        NewTurn {
            topic_id: topic.clone(),
            turn_id: TurnId::new(),
            user_message_id: MessageId::new(),
            user_parts: UiMessage::user_text("", text).parts,
            edit_of: None,
            assistants: vec![AssistantSlot {
                message_id: MessageId::new(),
                model: ModelRef { provider_id: ProviderId("p".into()), model: "m".into() },
                metadata: serde_json::json!({}),
            }],
        }
    }

    #[tokio::test]
    async fn audit_18_a_damaged_database_is_named_and_moved_aside_never_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("colloquy.db");
        let garbage = b"this was never a database; ".repeat(400);
        std::fs::write(&path, &garbage).unwrap();

        let err = Store::open(&path).await.unwrap_err();
        let StoreError::Unusable { path: named, problem: Unusable::Damaged(_) } = &err else { panic!("{err:?}") };
        assert_eq!(named, &path);
        assert!(err.to_string().contains(&format!("the database {} is damaged", path.display())), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), garbage, "the file was left as it was");

        let kept = move_aside(&path).unwrap();
        assert_eq!(std::fs::read(&kept).unwrap(), garbage, "moved, not deleted");
        assert!(kept.file_name().unwrap().to_str().unwrap().starts_with("colloquy.db.unusable-"));
        let store = Store::open(&path).await.unwrap();
        assert!(store.list_topics().await.unwrap().is_empty(), "a fresh database");
    }

    #[tokio::test]
    async fn audit_18_a_database_from_a_newer_version_is_named_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("colloquy.db");
        let store = Store::open(&path).await.unwrap();
        let topic = store.create_topic("from the future", None).await.unwrap();
        sqlx::query(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
             VALUES (9999, 'a later version', 1, x'00', 0)",
        )
        .execute(store.pool())
        .await
        .unwrap();
        store.close().await;

        let err = Store::open(&path).await.unwrap_err();
        assert!(matches!(&err, StoreError::Unusable { problem: Unusable::Newer { version: 9999 }, .. }), "{err:?}");
        assert!(err.to_string().contains("newer version of Colloquy"), "{err}");

        let kept = move_aside(&path).unwrap();
        assert!(Store::open(&path).await.is_ok(), "a fresh database opens");
        // The old file still holds the user's data, for the newer version to open.
        std::fs::rename(&kept, dir.path().join("old.db")).unwrap();
        let pool = sqlx::SqlitePool::connect(&format!("sqlite:{}", dir.path().join("old.db").display())).await.unwrap();
        let title: String = sqlx::query_scalar("SELECT title FROM topics WHERE id = ?")
            .bind(topic.id.as_str())
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(title, "from the future");
    }

    #[tokio::test]
    async fn audit_02_writes_work_again_once_a_full_disk_has_space() {
        let (store, _dir) = store().await;
        let topic = store.create_topic("t", None).await.unwrap();
        store.insert_turn(&turn(&topic.id, "kept")).await.unwrap();

        store.simulate_full_disk(true).await.unwrap();
        let big = "x".repeat(256 * 1024);
        for _ in 0..6 {
            let err = store.insert_turn(&turn(&topic.id, &big)).await.unwrap_err();
            assert!(matches!(err, StoreError::DiskFull), "{err}");
            assert!(err.to_string().starts_with("the disk is full"), "{err}");
        }

        // Space is back: every write works again, without a restart.
        store.simulate_full_disk(false).await.unwrap();
        for i in 0..6 {
            store.insert_turn(&turn(&topic.id, &format!("after {i}"))).await.unwrap();
        }
        let texts: Vec<String> =
            store.list_messages(&topic.id).await.unwrap().iter().map(|m| m.message.text()).collect();
        let users: Vec<&str> = texts.iter().map(String::as_str).filter(|t| !t.is_empty()).collect();
        assert_eq!(users, ["kept", "after 0", "after 1", "after 2", "after 3", "after 4", "after 5"]);
    }

    /// Every write takes this process's turn before it asks SQLite for the write lock, so no
    /// single-statement write (`Store::writer`) or transaction (`Store::write`) of ours
    /// ever waits in SQLite's busy handler for another. The store here has no busy handler
    /// at all (`busy_timeout` 0): whatever would have waited in it fails at once with
    /// `SQLITE_BUSY` instead, so any contention surfaces as an error. First a control shows
    /// that it would: a write beside a held write lock fails. Then many tasks write at
    /// once, mixing single statements (`create_topic`, `begin_call`, `finish_call`),
    /// transactions (`insert_turn`, `record_call`) and reads; every one must succeed.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_burst_of_writes_never_reaches_sqlites_busy_handler() {
        let (store, _dir) = store_without_busy_wait().await;

        let held = store.pool().begin_with("BEGIN IMMEDIATE").await.unwrap();
        let beside = sqlx::query("UPDATE topics SET title = title").execute(store.pool()).await.unwrap_err();
        assert_eq!(sqlite_code(&beside), Some(5), "SQLITE_BUSY at once, without waiting: {beside}");
        held.rollback().await.unwrap();

        let tasks: Vec<_> = (0..48)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    let topic = store.create_topic(&format!("burst {i}"), None).await?;
                    let new = turn(&topic.id, &format!("write {i}"));
                    store.insert_turn(&new).await?;
                    let message = new.assistants[0].message_id.to_string();
                    let input = serde_json::json!({ "i": i });
                    let call = NewCall {
                        topic_id: &topic.id,
                        message_id: &message,
                        call_id: "c1",
                        tool_name: "write_file",
                        input: &input,
                    };
                    let recorded = store.record_call(&call, &CallDecision::Allow { actor: "default" }).await?;
                    assert_eq!(recorded, Recorded::Approved);
                    assert!(store.begin_call(&message, "c1").await?.is_some(), "started once");
                    store.finish_call(&message, "c1", Ok(&serde_json::json!({ "content": [] }))).await?;
                    store.list_messages(&topic.id).await?;
                    Ok::<_, StoreError>(())
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap().unwrap();
        }
        assert_eq!(store.list_topics().await.unwrap().len(), 48);
    }
}
