//! Which replies are being resumed right now: two answers that land together (an
//! approval answered in two windows, "Allow all") resume a reply once.

/// The replies being resumed right now, by message id.
#[derive(Default)]
pub(crate) struct Resuming(std::sync::Mutex<std::collections::HashSet<String>>);

/// The right to resume one reply; let go when dropped.
pub(crate) struct ResumeClaim<'a> {
    resuming: &'a Resuming,
    message_id: String,
}

impl<'a> ResumeClaim<'a> {
    /// `None` when someone else is resuming the reply.
    pub(crate) fn take(resuming: &'a Resuming, message_id: &str) -> Option<Self> {
        let mut claimed = resuming.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        claimed.insert(message_id.to_owned()).then(|| Self { resuming, message_id: message_id.to_owned() })
    }
}

impl Drop for ResumeClaim<'_> {
    fn drop(&mut self) {
        self.resuming.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&self.message_id);
    }
}
