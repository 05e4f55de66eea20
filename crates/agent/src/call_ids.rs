//! [`CallIds`]: the tool-call ids of one reply, so that no two of its calls share one.
//!
//! A call is known by its id everywhere after the model made it: its tool part, its result
//! in the next request, its approval and its one run in the ledger (keyed by reply and
//! id). An id that came back — a server that numbers calls `call_0` in every answer, a
//! retried reply whose model repeats itself — would make a new call pass for an old one
//! that already ran. So every id is checked against the ids the reply already holds, and
//! a repeat is renamed (`<id>_2`, `<id>_3`, …) before anyone sees it; the renamed id is
//! the one the model gets back with the result.

use std::collections::HashSet;

pub(crate) struct CallIds {
    taken: HashSet<String>,
    /// Sets this run's prompt-written calls apart from any earlier run's.
    seed: String,
    prompt_calls: u32,
}

impl CallIds {
    /// Ids the reply already used (its stored calls and their ledger rows).
    pub(crate) fn new(taken: impl IntoIterator<Item = String>) -> Self {
        let seed = uuid::Uuid::new_v4().simple().to_string();
        Self { taken: taken.into_iter().collect(), seed: seed[..8].to_owned(), prompt_calls: 0 }
    }

    /// The model's id for a new call, or a fresh variant of it when the reply used it before.
    pub(crate) fn claim(&mut self, id: &str) -> String {
        let base = if id.trim().is_empty() { "call" } else { id };
        if self.taken.insert(base.to_owned()) {
            return base.to_owned();
        }
        let mut n = 2u32;
        loop {
            let candidate = format!("{base}_{n}");
            if self.taken.insert(candidate.clone()) {
                tracing::debug!(id = base, renamed = %candidate, "a tool-call id came back; the new call gets its own");
                return candidate;
            }
            n += 1;
        }
    }

    /// An id for a call the model wrote in its text (prompt-based tool calling).
    pub(crate) fn prompt_call(&mut self) -> String {
        let id = format!("ptc_{}_{}", self.seed, self.prompt_calls);
        self.prompt_calls += 1;
        self.claim(&id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_ids_are_renamed_and_new_ones_kept() {
        let mut ids = CallIds::new(["call_0".to_owned()]);
        assert_eq!(ids.claim("call_1"), "call_1");
        assert_eq!(ids.claim("call_0"), "call_0_2");
        assert_eq!(ids.claim("call_0"), "call_0_3");
        assert_eq!(ids.claim(""), "call");
        assert_eq!(ids.claim(""), "call_2");
    }

    #[test]
    fn prompt_calls_of_two_runs_never_meet() {
        let (mut first, mut second) = (CallIds::new([]), CallIds::new([]));
        let a = [first.prompt_call(), first.prompt_call()];
        let b = second.prompt_call();
        assert_ne!(a[0], a[1]);
        assert!(!a.contains(&b), "{a:?} {b}");
        assert!(b.starts_with("ptc_"));
    }
}
