//! Coding agents reached over ACP, in the engine: their settings in the store, the values
//! of their secret variables in the secret store (under `acp/<id>/env/<name>`, the way MCP
//! servers keep theirs), and what a session needs to start one.

use std::collections::HashSet;
use std::sync::Arc;

use protocol::ApiError;
use protocol::acp::{AcpAgent, AcpAgentInput, AcpVariable, UpdateAcpAgent};
use store::Store;
use store::acp::{AcpAgentRow, AcpAgentSettings, StoredVariable};
use store::secrets::SecretStore;

fn secret_key(agent_id: &str, name: &str) -> String {
    format!("acp/{agent_id}/env/{name}")
}

/// What starts an agent: its settings and its environment, secret values filled in.
pub(crate) struct AgentLaunch {
    pub(crate) row: AcpAgentRow,
    pub(crate) env: Vec<(String, String)>,
}

pub(crate) struct AcpAgents {
    store: Store,
    secrets: Arc<dyn SecretStore>,
}

impl AcpAgents {
    pub(crate) fn new(store: Store, secrets: Arc<dyn SecretStore>) -> Self {
        Self { store, secrets }
    }

    fn view(&self, row: AcpAgentRow) -> AcpAgent {
        let variables = row
            .variables
            .iter()
            .map(|v| AcpVariable {
                name: v.name.clone(),
                secret: v.secret,
                value: if v.secret { None } else { v.value.clone() },
                set: !v.secret || matches!(self.secrets.get(&secret_key(&row.id, &v.name)), Ok(Some(_))),
            })
            .collect();
        AcpAgent {
            id: row.id,
            name: row.name,
            command: row.command,
            args: row.args,
            variables,
            workspace: row.workspace,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }

    pub(crate) async fn list(&self) -> Result<Vec<AcpAgent>, ApiError> {
        Ok(self.store.list_acp_agents().await?.into_iter().map(|row| self.view(row)).collect())
    }

    pub(crate) async fn create(&self, input: AcpAgentInput) -> Result<AcpAgent, ApiError> {
        let id = uuid::Uuid::now_v7().to_string();
        let checked = checked(&input)?;
        self.store_values(&id, &input, None)?;
        let saved = self.store.create_acp_agent(&id, &checked.settings()).await;
        match saved {
            Ok(row) => Ok(self.view(row)),
            Err(err) => {
                self.forget_values(&id, &checked.variables, &[]);
                Err(err.into())
            }
        }
    }

    pub(crate) async fn update(&self, request: UpdateAcpAgent) -> Result<AcpAgent, ApiError> {
        let existing = self.store.get_acp_agent(&request.id).await?;
        let checked = checked(&request.agent)?;
        self.store_values(&existing.id, &request.agent, Some(&existing))?;
        let row = self.store.update_acp_agent(&existing.id, &checked.settings()).await?;
        self.forget_values(&existing.id, &existing.variables, &row.variables);
        Ok(self.view(row))
    }

    /// Refused while a session runs the agent: the session would lose what it runs.
    pub(crate) async fn delete(&self, id: &str) -> Result<(), ApiError> {
        let existing = self.store.get_acp_agent(id).await?;
        let used = self.store.sessions_of_acp_agent(id).await?;
        if used > 0 {
            return Err(ApiError::conflict(format!(
                "{} runs {used} agent session{}; delete {} first",
                existing.name,
                if used == 1 { "" } else { "s" },
                if used == 1 { "it" } else { "them" }
            )));
        }
        self.store.delete_acp_agent(id).await?;
        self.forget_values(id, &existing.variables, &[]);
        Ok(())
    }

    /// The agent with its environment, for a session to start it.
    pub(crate) async fn launch(&self, id: &str) -> Result<AgentLaunch, ApiError> {
        let row = self.store.get_acp_agent(id).await.map_err(|e| match e {
            store::StoreError::NotFound { .. } => {
                ApiError::bad_request("acpAgentId", "this session's agent was deleted from settings")
            }
            other => other.into(),
        })?;
        let mut env = Vec::new();
        for variable in &row.variables {
            let value = if variable.secret {
                match self.secrets.get(&secret_key(&row.id, &variable.name)) {
                    Ok(Some(value)) => value,
                    Ok(None) => {
                        return Err(ApiError::bad_request(
                            "variables",
                            format!(
                                "the value of `{}` of {} is missing from {}: type it again in settings",
                                variable.name,
                                row.name,
                                self.secrets.describe()
                            ),
                        ));
                    }
                    Err(err) => {
                        return Err(ApiError::internal(format!(
                            "could not read the value of {}: {err}",
                            variable.name
                        )));
                    }
                }
            } else {
                variable.value.clone().unwrap_or_default()
            };
            env.push((variable.name.clone(), value));
        }
        Ok(AgentLaunch { row, env })
    }

    /// Writes the secret values given; a secret given without a value keeps the stored one,
    /// which must exist.
    fn store_values(&self, id: &str, input: &AcpAgentInput, existing: Option<&AcpAgentRow>) -> Result<(), ApiError> {
        for variable in input.variables.iter().filter(|v| v.secret) {
            let name = variable.name.trim();
            let key = secret_key(id, name);
            match &variable.value {
                Some(value) => self.secrets.set(&key, value).map_err(|e| {
                    ApiError::internal(format!("could not store the value of the variable {name}: {e}"))
                })?,
                None => {
                    let was_secret =
                        existing.is_some_and(|old| old.variables.iter().any(|v| v.secret && v.name == name));
                    let stored = was_secret && matches!(self.secrets.get(&key), Ok(Some(_)));
                    if !stored {
                        return Err(ApiError::bad_request("variables", format!("`{name}` has no value yet: type one")));
                    }
                }
            }
        }
        Ok(())
    }

    /// Removes the secret values of `old` that `new` no longer has as secrets. Failures are
    /// logged: a leftover value is never read again.
    fn forget_values(&self, id: &str, old: &[StoredVariable], new: &[StoredVariable]) {
        let kept: HashSet<&str> = new.iter().filter(|v| v.secret).map(|v| v.name.as_str()).collect();
        for variable in old.iter().filter(|v| v.secret && !kept.contains(v.name.as_str())) {
            if let Err(err) = self.secrets.delete(&secret_key(id, &variable.name)) {
                tracing::warn!(error = %err, "could not remove an ACP agent's value from the secret store");
            }
        }
    }
}

/// An agent's settings, checked.
struct Checked {
    name: String,
    command: String,
    args: Vec<String>,
    variables: Vec<StoredVariable>,
    workspace: Option<String>,
}

impl Checked {
    fn settings(&self) -> AcpAgentSettings<'_> {
        AcpAgentSettings {
            name: &self.name,
            command: &self.command,
            args: &self.args,
            variables: &self.variables,
            workspace: self.workspace.as_deref(),
        }
    }
}

fn checked(input: &AcpAgentInput) -> Result<Checked, ApiError> {
    let name = input.name.trim();
    if name.is_empty() {
        return Err(ApiError::bad_request("name", "must not be empty"));
    }
    crate::limits::at_most("name", name, crate::limits::NAME)?;
    let command = input.command.trim();
    if command.is_empty() {
        return Err(ApiError::bad_request("command", "say which program starts the agent"));
    }
    if command.contains('\0') || input.args.iter().any(|a| a.contains('\0')) {
        return Err(ApiError::bad_request("command", "a program or argument cannot contain a NUL character"));
    }
    let mut seen = HashSet::new();
    let mut variables = Vec::new();
    for variable in &input.variables {
        let name = variable.name.trim();
        if name.is_empty() || name.contains('=') || name.contains('\0') {
            return Err(ApiError::bad_request(
                "variables",
                format!("`{name}` is not a variable name (not empty, no `=`)"),
            ));
        }
        if !seen.insert(name.to_owned()) {
            return Err(ApiError::bad_request("variables", format!("`{name}` is given twice")));
        }
        if variable.value.as_deref().is_some_and(|v| v.contains('\0')) {
            return Err(ApiError::bad_request("variables", format!("the value of `{name}` contains a NUL character")));
        }
        variables.push(StoredVariable {
            name: name.to_owned(),
            secret: variable.secret,
            value: if variable.secret { None } else { Some(variable.value.clone().unwrap_or_default()) },
        });
    }
    let workspace = match input.workspace.as_deref().map(str::trim).filter(|w| !w.is_empty()) {
        Some(path) => Some(crate::assistants::checked_workspace("workspace", path)?),
        None => None,
    };
    Ok(Checked { name: name.to_owned(), command: command.to_owned(), args: input.args.clone(), variables, workspace })
}
