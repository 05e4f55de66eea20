//! The approval policy: saved rules on tool names and arguments decide whether a call
//! runs, is refused, or waits for the user.
//!
//! Precedence, fixed, in this order (the first step that finds a rule decides):
//! 1. Expired rules and rules of other topics are ignored.
//! 2. **A matching `deny` wins, whatever its scope.** "Never" is never overridden by an
//!    "always": a topic's allow (what "Always for this topic" saves) cannot open what a
//!    global deny closes, nor a global allow what a topic's deny closes.
//! 3. Otherwise this topic's rules count before global ones: the topic is where the user
//!    said what they want here (answering "Always for this topic" on a card a global `ask`
//!    raised means "stop asking here", so it must take effect).
//! 4. Within that scope, `ask` beats `allow`.
//! 5. With no match the tool's default applies (read-only tools run, everything else asks).
//!
//! Conditions see the arguments as the tool reads them: a tool may normalize them first
//! (file tools give paths relative to the workspace, so `./.env`, `a/../.env` and the
//! absolute path all read `.env`; see `Tool::rule_input`).

use protocol::TopicId;
use protocol::tool::{MatchOp, PolicyDecision, PolicyRule, RuleCondition, RuleScope};
use regex::Regex;
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Who decided: a rule (by id) or the tool's default.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decider {
    Rule(String),
    Default,
}

impl Decider {
    /// As written in the audit log: `rule:<id>` or `default`.
    pub fn actor(&self) -> String {
        match self {
            Decider::Rule(id) => format!("rule:{id}"),
            Decider::Default => "default".to_owned(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub decision: PolicyDecision,
    pub decider: Decider,
}

/// A rule that failed to compile: `field` names what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct RuleError {
    pub field: String,
    pub message: String,
}

struct CompiledRule {
    id: String,
    tool: Regex,
    conditions: Vec<(String, Matcher)>,
    decision: PolicyDecision,
    topic: Option<TopicId>,
    expires_at: Option<OffsetDateTime>,
}

enum Matcher {
    Equals(Value),
    Prefix(String),
    Pattern(Regex),
}

/// Compiled rules, ready to decide calls.
#[derive(Default)]
pub struct Policy {
    rules: Vec<CompiledRule>,
}

impl Policy {
    /// Compiles `rules`. A rule that does not compile (a stored rule damaged by hand, say)
    /// is left out and logged; the others still apply.
    pub fn new(rules: &[PolicyRule]) -> Self {
        let rules = rules
            .iter()
            .filter_map(|rule| match compile(rule) {
                Ok(compiled) => Some(compiled),
                Err(err) => {
                    tracing::warn!(rule = %rule.id, error = %err, "a policy rule does not compile and is ignored");
                    None
                }
            })
            .collect();
        Self { rules }
    }

    /// The decision for calling `tool` with `input` in `topic` at `now`.
    pub fn decide(
        &self,
        tool: &str,
        input: &Value,
        topic: &TopicId,
        default: PolicyDecision,
        now: OffsetDateTime,
    ) -> Verdict {
        let live = |rule: &&CompiledRule| rule.expires_at.is_none_or(|at| at > now);
        let in_scope = |rule: &&CompiledRule| rule.topic.as_ref().is_none_or(|t| t == topic);
        let matching: Vec<&CompiledRule> = self
            .rules
            .iter()
            .filter(live)
            .filter(in_scope)
            .filter(|rule| rule.tool.is_match(tool) && rule.conditions_hold(input))
            .collect();
        let deny = matching.iter().find(|rule| rule.decision == PolicyDecision::Deny);
        let in_topic =
            || matching.iter().filter(|rule| rule.topic.is_some()).max_by_key(|rule| strictness(rule.decision));
        let global =
            || matching.iter().filter(|rule| rule.topic.is_none()).max_by_key(|rule| strictness(rule.decision));
        match deny.or_else(in_topic).or_else(global) {
            Some(rule) => Verdict { decision: rule.decision, decider: Decider::Rule(rule.id.clone()) },
            None => Verdict { decision: default, decider: Decider::Default },
        }
    }
}

fn strictness(decision: PolicyDecision) -> u8 {
    match decision {
        PolicyDecision::Allow => 0,
        PolicyDecision::Ask => 1,
        PolicyDecision::Deny => 2,
    }
}

impl CompiledRule {
    fn conditions_hold(&self, input: &Value) -> bool {
        self.conditions.iter().all(|(pointer, matcher)| {
            let Some(value) = input.pointer(pointer) else { return false };
            match matcher {
                Matcher::Equals(expected) => value == expected,
                Matcher::Prefix(prefix) => value.as_str().is_some_and(|s| s.starts_with(prefix.as_str())),
                Matcher::Pattern(regex) => value.as_str().is_some_and(|s| regex.is_match(s)),
            }
        })
    }
}

/// Checks a rule the way saving it does; the error names the offending field.
pub fn validate(rule: &PolicyRule) -> Result<(), RuleError> {
    compile(rule).map(|_| ())
}

fn compile(rule: &PolicyRule) -> Result<CompiledRule, RuleError> {
    let error = |field: &str, message: String| RuleError { field: field.to_owned(), message };
    if rule.tool.trim().is_empty() {
        return Err(error("tool", "must name a tool (or a glob such as `fs_*`)".into()));
    }
    let tool = glob(rule.tool.trim()).map_err(|e| error("tool", e))?;
    let mut conditions = Vec::with_capacity(rule.conditions.len());
    for (index, condition) in rule.conditions.iter().enumerate() {
        let field = |name: &str| format!("conditions.{index}.{name}");
        conditions.push(compile_condition(condition).map_err(|(name, message)| error(&field(name), message))?);
    }
    let expires_at = match &rule.expires_at {
        Some(text) => Some(
            OffsetDateTime::parse(text, &Rfc3339)
                .map_err(|e| error("expiresAt", format!("not an RFC 3339 time ({e})")))?,
        ),
        None => None,
    };
    let topic = match &rule.scope {
        RuleScope::Global => None,
        RuleScope::Topic { topic_id } => Some(topic_id.clone()),
    };
    Ok(CompiledRule { id: rule.id.clone(), tool, conditions, decision: rule.decision, topic, expires_at })
}

fn compile_condition(condition: &RuleCondition) -> Result<(String, Matcher), (&'static str, String)> {
    if !(condition.pointer.is_empty() || condition.pointer.starts_with('/')) {
        return Err(("pointer", "a JSON pointer starts with `/`, e.g. `/path`".into()));
    }
    let text = || condition.value.as_str().map(str::to_owned).ok_or(("value", "must be a string".to_owned()));
    let matcher = match condition.op {
        MatchOp::Equals => Matcher::Equals(condition.value.clone()),
        MatchOp::Prefix => Matcher::Prefix(text()?),
        MatchOp::Glob => Matcher::Pattern(glob(&text()?).map_err(|e| ("value", e))?),
        MatchOp::Regex => Matcher::Pattern(
            Regex::new(&text()?).map_err(|e| ("value", format!("not a valid regular expression: {e}")))?,
        ),
    };
    Ok((condition.pointer.clone(), matcher))
}

/// A glob as an anchored regex: `*` matches any run of characters (`/` included), `?`
/// exactly one; everything else is literal.
fn glob(pattern: &str) -> Result<Regex, String> {
    let mut regex = String::with_capacity(pattern.len() + 8);
    regex.push('^');
    for c in pattern.chars() {
        match c {
            '*' => regex.push_str(".*"),
            '?' => regex.push('.'),
            other => regex.push_str(&regex::escape(&other.to_string())),
        }
    }
    regex.push('$');
    Regex::new(&regex).map_err(|e| format!("not a usable pattern: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(id: &str, tool: &str, decision: PolicyDecision, scope: RuleScope) -> PolicyRule {
        PolicyRule {
            id: id.into(),
            tool: tool.into(),
            conditions: Vec::new(),
            decision,
            scope,
            expires_at: None,
            created_at: "2026-01-01T00:00:00Z".into(),
        }
    }

    fn now() -> OffsetDateTime {
        OffsetDateTime::parse("2026-06-01T00:00:00Z", &Rfc3339).unwrap()
    }

    fn topic(id: &str) -> TopicId {
        TopicId::from(id.to_owned())
    }

    #[test]
    fn without_a_matching_rule_the_default_applies() {
        let policy = Policy::new(&[rule("r", "other", PolicyDecision::Deny, RuleScope::Global)]);
        let verdict = policy.decide("read_file", &json!({}), &topic("t"), PolicyDecision::Allow, now());
        assert_eq!(verdict, Verdict { decision: PolicyDecision::Allow, decider: Decider::Default });
    }

    #[test]
    fn globs_match_names_and_the_strictest_rule_wins() {
        let policy = Policy::new(&[
            rule("a", "fs_*", PolicyDecision::Allow, RuleScope::Global),
            rule("d", "fs_write?", PolicyDecision::Deny, RuleScope::Global),
        ]);
        let decide = |tool: &str| policy.decide(tool, &json!({}), &topic("t"), PolicyDecision::Ask, now());
        assert_eq!(decide("fs_read").decision, PolicyDecision::Allow);
        assert_eq!(decide("fs_write2"), Verdict { decision: PolicyDecision::Deny, decider: Decider::Rule("d".into()) });
        assert_eq!(decide("fs_write").decision, PolicyDecision::Allow, "`?` is exactly one character");
        assert_eq!(decide("xfs_read").decision, PolicyDecision::Ask, "globs are anchored");
    }

    fn scoped(id: &str, decision: PolicyDecision, scope: RuleScope, path: Option<&str>) -> PolicyRule {
        let mut rule = rule(id, "write_file", decision, scope);
        if let Some(path) = path {
            rule.conditions = vec![RuleCondition { pointer: "/path".into(), op: MatchOp::Glob, value: json!(path) }];
        }
        rule
    }

    #[test]
    fn a_deny_wins_at_any_scope() {
        let mine = || RuleScope::Topic { topic_id: topic("mine") };
        // "Always for this topic" (a tool-wide allow) after a global deny on secrets.
        let policy = Policy::new(&[
            scoped("g", PolicyDecision::Deny, RuleScope::Global, Some("secrets/*")),
            scoped("t", PolicyDecision::Allow, mine(), None),
        ]);
        let decide = |t: &str, path: &str| {
            policy.decide("write_file", &json!({ "path": path }), &topic(t), PolicyDecision::Ask, now())
        };
        assert_eq!(
            decide("mine", "secrets/key"),
            Verdict { decision: PolicyDecision::Deny, decider: Decider::Rule("g".into()) }
        );
        assert_eq!(decide("mine", "notes.md").decision, PolicyDecision::Allow);
        assert_eq!(decide("other", "notes.md").decision, PolicyDecision::Ask, "topic rules stay in their topic");

        // And a topic's deny is not opened by a global "Always".
        let policy = Policy::new(&[
            scoped("g", PolicyDecision::Allow, RuleScope::Global, None),
            scoped("t", PolicyDecision::Deny, mine(), None),
        ]);
        assert_eq!(
            policy.decide("write_file", &json!({}), &topic("mine"), PolicyDecision::Ask, now()).decision,
            PolicyDecision::Deny
        );
        assert_eq!(
            policy.decide("write_file", &json!({}), &topic("other"), PolicyDecision::Ask, now()).decision,
            PolicyDecision::Allow
        );
    }

    #[test]
    fn short_of_a_deny_the_topic_speaks_before_the_global_rules() {
        let mine = || RuleScope::Topic { topic_id: topic("mine") };
        let decide = |rules: &[PolicyRule], t: &str| {
            Policy::new(rules).decide("write_file", &json!({ "path": "a.sh" }), &topic(t), PolicyDecision::Allow, now())
        };
        // "Always for this topic" answered on a card a global ask raised: no more asking here.
        let rules = [
            scoped("g", PolicyDecision::Ask, RuleScope::Global, Some("*.sh")),
            scoped("t", PolicyDecision::Allow, mine(), None),
        ];
        assert_eq!(
            decide(&rules, "mine"),
            Verdict { decision: PolicyDecision::Allow, decider: Decider::Rule("t".into()) }
        );
        assert_eq!(decide(&rules, "other").decision, PolicyDecision::Ask);
        // A topic that wants to be asked is asked, whatever "Always" says globally.
        let rules = [
            scoped("g", PolicyDecision::Allow, RuleScope::Global, None),
            scoped("t", PolicyDecision::Ask, mine(), None),
        ];
        assert_eq!(decide(&rules, "mine").decision, PolicyDecision::Ask);
        // Within one scope, ask beats allow.
        let rules =
            [scoped("a", PolicyDecision::Allow, mine(), None), scoped("q", PolicyDecision::Ask, mine(), Some("*.sh"))];
        assert_eq!(
            decide(&rules, "mine"),
            Verdict { decision: PolicyDecision::Ask, decider: Decider::Rule("q".into()) }
        );
    }

    #[test]
    fn conditions_test_arguments_by_json_pointer() {
        let mut allow = rule("a", "write_file", PolicyDecision::Allow, RuleScope::Global);
        allow.conditions = vec![
            RuleCondition { pointer: "/path".into(), op: MatchOp::Glob, value: json!("notes/*.md") },
            RuleCondition { pointer: "/mode".into(), op: MatchOp::Equals, value: json!(1) },
        ];
        let mut deny = rule("d", "fetch_url", PolicyDecision::Deny, RuleScope::Global);
        deny.conditions = vec![RuleCondition { pointer: "/url".into(), op: MatchOp::Regex, value: json!("^http://") }];
        let mut prefix = rule("p", "read_file", PolicyDecision::Deny, RuleScope::Global);
        prefix.conditions = vec![RuleCondition { pointer: "/path".into(), op: MatchOp::Prefix, value: json!(".env") }];
        let policy = Policy::new(&[allow, deny, prefix]);
        let decide =
            |tool: &str, input: Value| policy.decide(tool, &input, &topic("t"), PolicyDecision::Ask, now()).decision;
        assert_eq!(decide("write_file", json!({"path": "notes/a/b.md", "mode": 1})), PolicyDecision::Allow);
        assert_eq!(decide("write_file", json!({"path": "notes/a.md", "mode": 2})), PolicyDecision::Ask);
        assert_eq!(
            decide("write_file", json!({"path": "notes/a.md"})),
            PolicyDecision::Ask,
            "a missing argument fails"
        );
        assert_eq!(decide("fetch_url", json!({"url": "http://x"})), PolicyDecision::Deny);
        assert_eq!(decide("fetch_url", json!({"url": "https://x"})), PolicyDecision::Ask);
        assert_eq!(decide("read_file", json!({"path": ".env.local"})), PolicyDecision::Deny);
    }

    #[test]
    fn expired_rules_are_ignored() {
        let mut expired = rule("e", "*", PolicyDecision::Allow, RuleScope::Global);
        expired.expires_at = Some("2026-05-31T23:59:59Z".into());
        let mut live = rule("l", "x", PolicyDecision::Deny, RuleScope::Global);
        live.expires_at = Some("2026-06-01T00:00:01Z".into());
        let policy = Policy::new(&[expired, live]);
        assert_eq!(
            policy.decide("y", &json!({}), &topic("t"), PolicyDecision::Ask, now()).decision,
            PolicyDecision::Ask
        );
        assert_eq!(
            policy.decide("x", &json!({}), &topic("t"), PolicyDecision::Ask, now()).decision,
            PolicyDecision::Deny
        );
    }

    #[test]
    fn broken_rules_are_named_when_saved_and_skipped_when_loaded() {
        let mut bad = rule("b", "x", PolicyDecision::Allow, RuleScope::Global);
        bad.conditions = vec![RuleCondition { pointer: "/a".into(), op: MatchOp::Regex, value: json!("(") }];
        assert_eq!(validate(&bad).unwrap_err().field, "conditions.0.value");
        bad.conditions[0] = RuleCondition { pointer: "a".into(), op: MatchOp::Equals, value: json!(1) };
        assert_eq!(validate(&bad).unwrap_err().field, "conditions.0.pointer");
        let mut late = rule("l", "x", PolicyDecision::Allow, RuleScope::Global);
        late.expires_at = Some("tomorrow".into());
        assert_eq!(validate(&late).unwrap_err().field, "expiresAt");
        assert_eq!(validate(&rule("e", " ", PolicyDecision::Allow, RuleScope::Global)).unwrap_err().field, "tool");
        let policy = Policy::new(&[late, rule("ok", "x", PolicyDecision::Deny, RuleScope::Global)]);
        assert_eq!(
            policy.decide("x", &json!({}), &topic("t"), PolicyDecision::Allow, now()).decision,
            PolicyDecision::Deny
        );
    }
}
