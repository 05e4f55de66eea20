//! [`ToolSet`]: the tools one request may use, by name.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::tool::Tool;

/// Tools by name. Adding a second tool with a name already taken replaces nothing: the
/// first one stays and the addition is reported (names are namespaced upstream).
#[derive(Clone, Default)]
pub struct ToolSet {
    tools: BTreeMap<String, Arc<dyn Tool>>,
}

impl ToolSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `tool`; false (and nothing changes) when its name is taken.
    pub fn add(&mut self, tool: Arc<dyn Tool>) -> bool {
        let name = tool.definition().name.clone();
        if self.tools.contains_key(&name) {
            tracing::warn!(tool = %name, "a tool with this name is already offered; the new one is left out");
            return false;
        }
        self.tools.insert(name, tool);
        true
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// The tools in name order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.tools.values()
    }

    /// Only the tools `keep` accepts.
    #[must_use]
    pub fn filtered(&self, mut keep: impl FnMut(&dyn Tool) -> bool) -> Self {
        let tools =
            self.tools.iter().filter(|(_, tool)| keep(tool.as_ref())).map(|(k, v)| (k.clone(), v.clone())).collect();
        Self { tools }
    }
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.tools.keys()).finish()
    }
}
