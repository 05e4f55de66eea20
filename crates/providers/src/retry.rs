//! [`RetryPolicy`]: when a refused request is sent again, and after how long.
//!
//! Retrying is only ever decided on an error *status*, that is before the first byte of a
//! successful answer: once any of the answer has arrived, sending the request again would
//! show the user a different answer glued to the start of the first one.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

use crate::error::{ProviderError, ProviderErrorKind};

/// How often, and how patiently, a request refused with a transient status (408, 425, 429,
/// 5xx, 529, or an `overloaded` error body) is sent again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first one included; `1` never retries.
    pub max_attempts: u32,
    /// The wait before the first retry when the provider does not say (`Retry-After`);
    /// it doubles for each later retry.
    pub initial_backoff: Duration,
    /// The longest wait the doubling may reach.
    pub max_backoff: Duration,
    /// A `Retry-After` longer than this is not waited for: the error goes to the user, who
    /// can decide to wait.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    /// Up to 4 attempts, waiting 1 s, 2 s, 4 s (or what `Retry-After` asks, up to 60 s).
    fn default() -> Self {
        Self {
            max_attempts: 4,
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

/// Why a refused request is not sent again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NoRetry {
    /// The status or error is not one that waiting fixes.
    NotTransient,
    /// Every allowed attempt was made.
    OutOfAttempts,
    /// The provider asks to wait longer than the policy allows.
    WaitTooLong(Duration),
}

impl RetryPolicy {
    /// Never retries.
    pub fn none() -> Self {
        Self { max_attempts: 1, ..Self::default() }
    }

    /// How long to wait before sending again, after attempt number `attempt` (1-based) was
    /// refused with `status` and `headers`, classified as `error`.
    pub(crate) fn delay_after(
        &self,
        attempt: u32,
        status: u16,
        headers: &HeaderMap,
        error: &ProviderError,
        now: SystemTime,
    ) -> Result<Duration, NoRetry> {
        if !is_transient(status, error) {
            return Err(NoRetry::NotTransient);
        }
        if attempt >= self.max_attempts {
            return Err(NoRetry::OutOfAttempts);
        }
        match retry_after(headers, now) {
            Some(wait) if wait > self.max_retry_after => Err(NoRetry::WaitTooLong(wait)),
            Some(wait) => Ok(wait),
            None => Ok(self.backoff(attempt)),
        }
    }

    /// The exponential backoff after attempt number `attempt`: `initial × 2^(attempt-1)`,
    /// capped at `max_backoff`.
    fn backoff(&self, attempt: u32) -> Duration {
        let doublings = attempt.saturating_sub(1).min(31);
        self.initial_backoff.saturating_mul(1 << doublings).min(self.max_backoff)
    }
}

/// Whether waiting may fix this refusal. An exhausted quota is a 429 that waiting does not fix.
fn is_transient(status: u16, error: &ProviderError) -> bool {
    let transient_status = matches!(status, 408 | 425 | 429 | 500..=599);
    let quota_gone = error.kind == ProviderErrorKind::RateLimit && !error.retryable;
    (transient_status || error.kind == ProviderErrorKind::Overloaded) && !quota_gone
}

/// What the provider asks to wait: `retry-after-ms` (OpenAI, Azure) or `Retry-After` as
/// seconds or an HTTP date. Unreadable values count as absent; dates in the past as zero.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return seconds(ms / 1000.0);
    }
    let value = header("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return seconds(secs);
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

fn seconds(secs: f64) -> Option<Duration> {
    (secs.is_finite() && secs >= 0.0).then(|| Duration::try_from_secs_f64(secs).ok()).flatten()
}

/// A few words on why a retry happens, for [`crate::CompletionEvent::Retrying`].
pub(crate) fn retry_reason(error: &ProviderError) -> String {
    let what = match error.kind {
        ProviderErrorKind::RateLimit => "rate limited",
        ProviderErrorKind::Overloaded => "overloaded",
        ProviderErrorKind::Timeout => "timed out",
        _ => "server error",
    };
    match error.status {
        Some(status) => format!("{what} (HTTP {status})"),
        None => what.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    fn refused(status: u16, body: &str) -> ProviderError {
        ProviderError::from_http_status("Acme", status, body.as_bytes())
    }

    const NOW: Duration = Duration::from_secs(1_700_000_000);

    fn delay(
        policy: &RetryPolicy,
        attempt: u32,
        status: u16,
        pairs: &[(&'static str, &str)],
    ) -> Result<Duration, NoRetry> {
        policy.delay_after(attempt, status, &headers(pairs), &refused(status, ""), SystemTime::UNIX_EPOCH + NOW)
    }

    #[test]
    fn backs_off_exponentially_up_to_the_cap() {
        let policy = RetryPolicy { max_attempts: 10, ..RetryPolicy::default() };
        let waits: Vec<_> = (1..=7).map(|attempt| delay(&policy, attempt, 503, &[]).unwrap().as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 20, 20]);
        assert_eq!(delay(&policy, 10, 503, &[]), Err(NoRetry::OutOfAttempts));
        assert_eq!(delay(&RetryPolicy::none(), 1, 503, &[]), Err(NoRetry::OutOfAttempts));
    }

    #[test]
    fn only_transient_statuses_are_retried() {
        let policy = RetryPolicy::default();
        for status in [408, 425, 429, 500, 502, 503, 504, 529] {
            assert!(delay(&policy, 1, status, &[]).is_ok(), "{status}");
        }
        for status in [400, 401, 403, 404, 413, 422] {
            assert_eq!(delay(&policy, 1, status, &[]), Err(NoRetry::NotTransient), "{status}");
        }
        let overloaded = refused(400, r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#);
        let now = SystemTime::UNIX_EPOCH + NOW;
        assert!(policy.delay_after(1, 400, &HeaderMap::new(), &overloaded, now).is_ok());
        let quota =
            refused(429, r#"{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}"#);
        assert_eq!(policy.delay_after(1, 429, &HeaderMap::new(), &quota, now), Err(NoRetry::NotTransient));
    }

    #[test]
    fn honours_retry_after_in_seconds_dates_and_milliseconds() {
        let policy = RetryPolicy::default();
        assert_eq!(delay(&policy, 1, 429, &[("retry-after", "7")]), Ok(Duration::from_secs(7)));
        assert_eq!(delay(&policy, 3, 429, &[("retry-after", "0")]), Ok(Duration::ZERO));
        assert_eq!(delay(&policy, 1, 429, &[("retry-after", "1.5")]), Ok(Duration::from_millis(1500)));
        let in_30s = httpdate::fmt_http_date(SystemTime::UNIX_EPOCH + NOW + Duration::from_secs(30));
        assert_eq!(delay(&policy, 1, 503, &[("retry-after", &in_30s)]), Ok(Duration::from_secs(30)));
        let past = httpdate::fmt_http_date(SystemTime::UNIX_EPOCH + NOW - Duration::from_secs(30));
        assert_eq!(delay(&policy, 1, 503, &[("retry-after", &past)]), Ok(Duration::ZERO));
        assert_eq!(
            delay(&policy, 1, 429, &[("retry-after-ms", "250"), ("retry-after", "9")]),
            Ok(Duration::from_millis(250))
        );
        assert_eq!(
            delay(&policy, 2, 429, &[("retry-after", "soon")]),
            Ok(Duration::from_secs(2)),
            "unreadable: backoff"
        );
        assert_eq!(delay(&policy, 1, 429, &[("retry-after", "-3")]), Ok(Duration::from_secs(1)));
        assert_eq!(
            delay(&policy, 1, 429, &[("retry-after", "3600")]),
            Err(NoRetry::WaitTooLong(Duration::from_secs(3600)))
        );
    }

    #[test]
    fn reasons_are_short_and_name_the_status() {
        assert_eq!(retry_reason(&refused(429, "")), "rate limited (HTTP 429)");
        assert_eq!(retry_reason(&refused(529, "")), "overloaded (HTTP 529)");
        assert_eq!(retry_reason(&refused(500, r#"{"error":{"message":"x"}}"#)), "server error (HTTP 500)");
        assert_eq!(retry_reason(&refused(408, "")), "timed out (HTTP 408)");
    }
}
