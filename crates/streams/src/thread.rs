//! The thread the stream manager's tasks run on.
//!
//! A paced reply (one chunk a millisecond, like a real model) costs wake-ups, not work:
//! on a multi-threaded runtime the HTTP connection, the model call, the topic actor and
//! each window's delivery were woken on whichever worker was free, so every chunk crossed
//! threads several times (a futex hand-off and a context switch each). Here every task
//! of every topic — the actors, their executions with the HTTP connections they open,
//! and the persister — runs on one thread with its own single-threaded runtime and its
//! own I/O driver: a chunk arriving on the socket wakes that thread once, and the hops
//! from connection to execution to actor to listener are queue pushes on it.

use std::future::Future;

use tokio::runtime::{Builder, Handle};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Where a [`crate::StreamManager`] runs its tasks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StreamThreads {
    /// A thread of its own (what the app uses; see the module docs).
    #[default]
    Own,
    /// The tokio runtime of whoever creates the manager: for tests that run everything on
    /// tokio's paused clock, which a second runtime does not share.
    Caller,
}

/// Spawns tracked tasks on the stream thread, or on the caller's runtime.
#[derive(Clone)]
pub(crate) struct Spawner {
    tracker: TaskTracker,
    /// `None`: the caller's runtime.
    thread: Option<Handle>,
}

impl Spawner {
    /// Starts the stream thread when `threads` asks for one. It runs until `stop` is
    /// cancelled and then until every tracked task has ended (the tracker must be closed
    /// by then), so dropping the manager never cuts a reply's final write short. If the
    /// thread cannot be started, tasks run on the caller's runtime (slower, never wrong).
    pub(crate) fn start(threads: StreamThreads, tracker: TaskTracker, stop: CancellationToken) -> Self {
        let thread = match threads {
            StreamThreads::Caller => None,
            StreamThreads::Own => match own_thread(tracker.clone(), stop) {
                Ok(handle) => Some(handle),
                Err(err) => {
                    tracing::error!(error = %err, "could not start the stream thread; streaming on the caller's runtime");
                    None
                }
            },
        };
        Self { tracker, thread }
    }

    /// The stream thread's runtime; `None` when tasks run on the caller's.
    pub(crate) fn handle(&self) -> Option<&Handle> {
        self.thread.as_ref()
    }

    pub(crate) fn spawn<F>(&self, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        match &self.thread {
            Some(handle) => drop(self.tracker.spawn_on(task, handle)),
            None => drop(self.tracker.spawn(task)),
        }
    }
}

fn own_thread(tracker: TaskTracker, stop: CancellationToken) -> std::io::Result<Handle> {
    let runtime = Builder::new_current_thread().enable_all().build()?;
    let handle = runtime.handle().clone();
    // Its records go where its creator's go (a test's own subscriber, or the app's).
    let dispatch = tracing::dispatcher::get_default(Clone::clone);
    std::thread::Builder::new().name("colloquy-streams".to_owned()).spawn(move || {
        let _logs = tracing::dispatcher::set_default(&dispatch);
        runtime.block_on(async move {
            stop.cancelled().await;
            tracker.wait().await;
        });
        // Dropping the runtime ends what no tracker waits for (idle pooled connections).
    })?;
    Ok(handle)
}
