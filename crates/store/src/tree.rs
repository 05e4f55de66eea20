//! The conversation tree: which messages are versions of which, and the active path.
//!
//! A user message hangs under the previous turn's user message (`NULL`: the first turn),
//! so an edit is a sibling under the same parent and starts a branch. A reply hangs under
//! its user message; the replies of one model to one user message are the versions of that
//! reply (a model column). Among siblings the active one has the highest `selected` (ties:
//! the newest row); a new row or a switch takes the topic's highest `selected` plus one,
//! so "exactly one active child" holds by construction.
//!
//! The active path starts at the active first-turn user message and follows the active
//! user child of each; every user message on it brings the active version of each of its
//! model columns. Working out the path is pure ([`path`]) over the light rows of one
//! topic ([`Node`]), read in a transaction when a write depends on it.

use std::collections::{HashMap, HashSet};

use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqliteConnection};

use crate::Result;

/// The columns of a message the tree needs, in row order.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub id: String,
    pub parent: Option<String>,
    pub user: bool,
    /// A reply's model column (`provider_id`, `model_name`); `None` for user rows.
    pub column: Option<(String, String)>,
    pub selected: i64,
    pub status: String,
    pub status_reason: Option<String>,
}

/// Where a path ends.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Tip<'a> {
    /// The topic's active path, to its leaf.
    Active,
    /// The path from the first turn down to this user message (its turn included), through
    /// its ancestors whether or not they are active.
    Through(&'a str),
}

/// One message on a path, as an index into the nodes, with its versions (indexes, oldest
/// first, itself included).
#[derive(Clone, Debug)]
pub(crate) struct Step {
    pub node: usize,
    pub versions: Vec<usize>,
}

/// The light rows of a topic, oldest first.
pub(crate) async fn nodes(conn: &mut SqliteConnection, topic_id: &str) -> Result<Vec<Node>> {
    let rows = sqlx::query(
        "SELECT id, parent_id, role, provider_id, model_name, selected, status, status_reason \
         FROM messages WHERE topic_id = ? ORDER BY rowid",
    )
    .bind(topic_id)
    .fetch_all(conn)
    .await?;
    rows.iter().map(node).collect()
}

/// A row's place in the tree, from any read that selects the columns [`nodes`] does.
pub(crate) fn node(row: &SqliteRow) -> Result<Node> {
    let user = row.try_get::<String, _>("role")? == "user";
    let provider: Option<String> = row.try_get("provider_id")?;
    let model: Option<String> = row.try_get("model_name")?;
    Ok(Node {
        id: row.try_get("id")?,
        parent: row.try_get("parent_id")?,
        user,
        column: if user { None } else { Some((provider.unwrap_or_default(), model.unwrap_or_default())) },
        selected: row.try_get("selected")?,
        status: row.try_get("status")?,
        status_reason: row.try_get("status_reason")?,
    })
}

/// The active one among siblings (indexes in row order): highest `selected`, then newest.
fn active(nodes: &[Node], siblings: &[usize]) -> Option<usize> {
    siblings.iter().copied().max_by_key(|&i| (nodes[i].selected, i))
}

/// The nodes of a topic indexed by parent, built once per read.
pub(crate) struct Tree<'a> {
    pub nodes: &'a [Node],
    /// User messages by their parent user message (`None`: first turns), in row order.
    /// A user row whose parent is not a user message of the topic (a damaged or foreign
    /// parent) counts as a first turn, so it stays reachable.
    users_under: HashMap<Option<&'a str>, Vec<usize>>,
    /// Replies by their user message, in row order.
    replies_under: HashMap<&'a str, Vec<usize>>,
    users: HashMap<&'a str, usize>,
}

impl<'a> Tree<'a> {
    pub(crate) fn new(nodes: &'a [Node]) -> Self {
        let users: HashMap<&str, usize> =
            nodes.iter().enumerate().filter(|(_, n)| n.user).map(|(i, n)| (n.id.as_str(), i)).collect();
        let mut users_under: HashMap<Option<&str>, Vec<usize>> = HashMap::new();
        let mut replies_under: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, node) in nodes.iter().enumerate() {
            let parent = node.parent.as_deref().filter(|p| users.contains_key(p));
            if node.user {
                users_under.entry(parent).or_default().push(i);
            } else if let Some(parent) = parent {
                replies_under.entry(parent).or_default().push(i);
            }
        }
        Self { nodes, users_under, replies_under, users }
    }

    /// The index of a message, if it is in the topic.
    pub(crate) fn find(&self, id: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.id == id)
    }

    /// The user message's parent user message, if it has one in the topic.
    pub(crate) fn parent_user(&self, index: usize) -> Option<usize> {
        self.nodes[index].parent.as_deref().and_then(|p| self.users.get(p).copied())
    }

    /// The replies to a user message grouped in model columns (in order of each column's
    /// first reply), each column's versions in row order.
    pub(crate) fn columns(&self, user: usize) -> Vec<Vec<usize>> {
        let mut out: Vec<Vec<usize>> = Vec::new();
        for &i in self.replies_under.get(self.nodes[user].id.as_str()).map(Vec::as_slice).unwrap_or_default() {
            match out.iter_mut().find(|column| self.nodes[column[0]].column == self.nodes[i].column) {
                Some(column) => column.push(i),
                None => out.push(vec![i]),
            }
        }
        out
    }

    /// The versions of a message: its siblings (itself included), in row order.
    pub(crate) fn versions(&self, index: usize) -> Vec<usize> {
        let node = &self.nodes[index];
        if node.user {
            let parent = self.parent_user(index).map(|p| self.nodes[p].id.as_str());
            return self.users_under.get(&parent).cloned().unwrap_or_else(|| vec![index]);
        }
        let Some(parent) = node.parent.as_deref().and_then(|p| self.users.get(p).copied()) else {
            return vec![index];
        };
        self.columns(parent).into_iter().find(|column| column.contains(&index)).unwrap_or_else(|| vec![index])
    }

    /// The path: each turn's user message, then the active version of each of its
    /// columns. `None` when `Tip::Through` names no user message of the topic.
    pub(crate) fn path(&self, tip: Tip<'_>) -> Option<Vec<Step>> {
        let users: Vec<usize> = match tip {
            Tip::Active => {
                let mut chain = Vec::new();
                let mut parent: Option<&str> = None;
                // Children are later rows, so this ends; the bound guards damaged data.
                while chain.len() <= self.nodes.len() {
                    let Some(next) = self.users_under.get(&parent).and_then(|c| active(self.nodes, c)) else { break };
                    chain.push(next);
                    parent = Some(self.nodes[next].id.as_str());
                }
                chain
            }
            Tip::Through(id) => {
                let mut current = *self.users.get(id)?;
                let mut chain = vec![current];
                let mut seen = HashSet::from([current]);
                // `seen` guards damaged data (a loop of parents) without a scan per step.
                while let Some(up) = self.parent_user(current).filter(|&up| seen.insert(up)) {
                    chain.push(up);
                    current = up;
                }
                chain.reverse();
                chain
            }
        };
        let mut steps = Vec::new();
        for user in users {
            steps.push(Step { node: user, versions: self.versions(user) });
            for column in self.columns(user) {
                if let Some(reply) = active(self.nodes, &column) {
                    steps.push(Step { node: reply, versions: column });
                }
            }
        }
        Some(steps)
    }

    /// The message and everything below it: a user message's replies and every later turn
    /// of its branch; a reply alone.
    pub(crate) fn subtree(&self, index: usize) -> Vec<usize> {
        let mut out = vec![index];
        let mut next = 0;
        while next < out.len() {
            let node = &self.nodes[out[next]];
            if node.user {
                let id = Some(node.id.as_str());
                let below = self.replies_under.get(node.id.as_str()).into_iter().flatten();
                out.extend(below.chain(self.users_under.get(&id).into_iter().flatten()).copied());
            }
            next += 1;
        }
        out
    }

    /// The sibling that takes over when the active `index` goes: the next version, else
    /// the previous one.
    pub(crate) fn neighbour(&self, index: usize) -> Option<usize> {
        let siblings = self.versions(index);
        let at = siblings.iter().position(|&i| i == index)?;
        siblings.get(at + 1).or_else(|| at.checked_sub(1).and_then(|before| siblings.get(before))).copied()
    }

    /// Whether the message is the active one among its siblings.
    pub(crate) fn is_active(&self, index: usize) -> bool {
        active(self.nodes, &self.versions(index)) == Some(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(id: &str, parent: Option<&str>, selected: i64) -> Node {
        Node {
            id: id.into(),
            parent: parent.map(Into::into),
            user: true,
            column: None,
            selected,
            status: "success".into(),
            status_reason: None,
        }
    }

    fn reply(id: &str, parent: &str, model: &str, selected: i64) -> Node {
        Node {
            id: id.into(),
            parent: Some(parent.into()),
            user: false,
            column: Some(("p".into(), model.into())),
            selected,
            status: "success".into(),
            status_reason: None,
        }
    }

    fn ids(nodes: &[Node], steps: &[Step]) -> Vec<String> {
        steps.iter().map(|s| nodes[s.node].id.clone()).collect()
    }

    #[test]
    fn a_linear_history_is_one_path_and_has_no_versions() {
        let nodes =
            vec![user("u1", None, 0), reply("r1", "u1", "a", 0), user("u2", Some("u1"), 0), reply("r2", "u2", "a", 0)];
        let steps = Tree::new(&nodes).path(Tip::Active).unwrap();
        assert_eq!(ids(&nodes, &steps), ["u1", "r1", "u2", "r2"]);
        assert!(steps.iter().all(|s| s.versions.len() == 1));
    }

    #[test]
    fn the_highest_selection_wins_and_each_column_shows_one_version() {
        let nodes = vec![
            user("u1", None, 1),
            reply("a1", "u1", "a", 1),
            reply("b1", "u1", "b", 1),
            reply("a2", "u1", "a", 3),
            user("u2", Some("u1"), 2),
            reply("x", "u2", "a", 2),
            user("u2b", Some("u1"), 4),
        ];
        let steps = Tree::new(&nodes).path(Tip::Active).unwrap();
        assert_eq!(ids(&nodes, &steps), ["u1", "a2", "b1", "u2b"]);
        assert_eq!(steps[1].versions, [1, 3], "a's versions, oldest first");
        assert_eq!(steps[3].versions, [4, 6], "u2b is an edit of u2");
        // Through the old branch: its own turn, whatever is active.
        let through = Tree::new(&nodes).path(Tip::Through("u2")).unwrap();
        assert_eq!(ids(&nodes, &through), ["u1", "a2", "b1", "u2", "x"]);
        assert!(Tree::new(&nodes).path(Tip::Through("nope")).is_none());
    }

    #[test]
    fn a_subtree_holds_every_later_turn_and_a_neighbour_takes_over() {
        let nodes = vec![
            user("u1", None, 0),
            reply("r1", "u1", "a", 0),
            user("u2", Some("u1"), 0),
            reply("r2", "u2", "a", 0),
            user("u3", Some("u2"), 0),
            user("u2b", Some("u1"), 0),
        ];
        let gone: Vec<&str> = Tree::new(&nodes).subtree(2).iter().map(|&i| nodes[i].id.as_str()).collect();
        assert_eq!(gone, ["u2", "r2", "u3"]);
        assert_eq!(Tree::new(&nodes).subtree(1), [1], "a reply has nothing below it");
        assert_eq!(Tree::new(&nodes).neighbour(2), Some(5));
        assert_eq!(Tree::new(&nodes).neighbour(5), Some(2));
        assert_eq!(Tree::new(&nodes).neighbour(0), None);
        assert!(Tree::new(&nodes).is_active(5) && !Tree::new(&nodes).is_active(2), "ties: the newest");
    }

    #[test]
    fn a_user_row_under_a_foreign_parent_is_a_first_turn() {
        let nodes = vec![user("u1", Some("gone"), 0), reply("r1", "u1", "a", 0)];
        assert_eq!(ids(&nodes, &Tree::new(&nodes).path(Tip::Active).unwrap()), ["u1", "r1"]);
    }
}
