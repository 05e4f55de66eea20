//! How long the hub waits before it reconnects a server: a second after the first
//! failure, doubling up to a minute. The delay only starts over once a connection has
//! stayed up for [`STABLE`], so a server that answers the handshake and dies right after
//! is restarted ever more slowly instead of every second.

use std::time::Duration;

const FIRST: Duration = Duration::from_secs(1);
const MAX: Duration = Duration::from_secs(60);
/// How long a connection must last to count as healthy again.
pub(crate) const STABLE: Duration = Duration::from_secs(30);

#[derive(Debug)]
pub(crate) struct Backoff {
    next: Duration,
}

impl Backoff {
    pub(crate) fn new() -> Self {
        Self { next: FIRST }
    }

    /// A connection attempt failed: how long to wait before the next one.
    pub(crate) fn failed(&mut self) -> Duration {
        let delay = self.next;
        self.next = (self.next * 2).min(MAX);
        delay
    }

    /// A connection ended after it was up for `uptime`: how long to wait before
    /// reconnecting.
    pub(crate) fn ended(&mut self, uptime: Duration) -> Duration {
        if uptime >= STABLE {
            self.next = FIRST;
        }
        self.failed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(delays: impl IntoIterator<Item = Duration>) -> Vec<u64> {
        delays.into_iter().map(|d| d.as_secs()).collect()
    }

    #[test]
    fn failures_wait_longer_each_time_up_to_a_minute() {
        let mut backoff = Backoff::new();
        assert_eq!(secs((0..8).map(|_| backoff.failed())), vec![1, 2, 4, 8, 16, 32, 60, 60]);
    }

    #[test]
    fn a_server_that_dies_soon_after_connecting_keeps_backing_off() {
        let mut backoff = Backoff::new();
        let short = Duration::from_secs(2);
        assert_eq!(secs((0..4).map(|_| backoff.ended(short))), vec![1, 2, 4, 8]);
        // Up long enough: it starts over.
        assert_eq!(backoff.ended(STABLE).as_secs(), 1);
        assert_eq!(backoff.failed().as_secs(), 2);
    }
}
