//! Persistence on SQLite in WAL mode.
//!
//! - [`Store`]: the pool, opened once per process; migrations from `/migrations` run at open.
//! - [`topics`], [`messages`], [`providers`], [`inbox`], [`assistants`], [`tools`]: one
//!   repository module per table family ([`tools`] holds the policy rules, the tool-call
//!   ledger, approvals and the audit log; [`mcp`] the MCP servers and their cached tools;
//!   [`sessions`] the agent sessions; [`settings`] the app-wide settings).
//! - [`secrets`]: where API keys and MCP servers' variable and header values live (never in
//!   the database).
//!
//! Rows written by an older or damaged version never make a read fail as a whole: a
//! message whose JSON cannot be parsed comes back with a `data-error` part saying so.

pub mod assistants;
pub mod inbox;
pub mod mcp;
pub mod messages;
pub mod providers;
pub mod secrets;
pub mod sessions;
pub mod settings;
pub mod tools;
pub mod topics;

use std::ops::{Deref, DerefMut};
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::Sqlite;
use sqlx::pool::PoolConnection;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use tokio::sync::{Mutex, OwnedMutexGuard};

pub use messages::{AssistantSlot, Checkpoint, NewTurn};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations");

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{what} {id} not found")]
    NotFound { what: &'static str, id: String },
    /// The row was written since the caller read it.
    #[error("{what} {id} changed since it was read")]
    Changed { what: &'static str, id: String },
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("database migration failed: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
    #[error("could not encode {0}")]
    Encode(String),
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// The database. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    pool: SqlitePool,
    /// Write transactions take turns here before they ask SQLite for its write lock.
    writers: Arc<Mutex<()>>,
}

impl Store {
    /// Opens (creating if needed) the database file and brings its schema up to date.
    pub async fn open(path: &Path) -> Result<Self> {
        if let Some(dir) = path.parent() {
            // The pool would fail with an unhelpful "unable to open database file".
            let _ = std::fs::create_dir_all(dir);
        }
        let options = SqliteConnectOptions::from_str("sqlite:")?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(5));
        let pool = SqlitePoolOptions::new().max_connections(4).connect_with(options).await?;
        MIGRATOR.run(&pool).await?;
        Ok(Self { pool, writers: Arc::new(Mutex::new(())) })
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Rewrites the database file without the pages deleted or replaced rows left behind
    /// (SQLite keeps their old bytes until reused) and empties the WAL: after a secret was
    /// moved out of a row, no copy of it stays on disk.
    pub async fn compact(&self) -> Result<()> {
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&self.pool).await?;
        sqlx::query("VACUUM").execute(&self.pool).await?;
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&self.pool).await?;
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
    let now = time::OffsetDateTime::now_utc();
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    now.format(&format).unwrap_or_else(|_| now.unix_timestamp().to_string())
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::Store;

    pub async fn store() -> (Store, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("colloquy.db")).await.unwrap();
        (store, dir)
    }
}
