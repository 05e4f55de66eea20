//! What a stdio server's process sees of the app's environment: only a small safe set
//! (the one the reference TypeScript SDK passes, `getDefaultEnvironment`), then the
//! server's own configured variables on top. The app's other variables (API keys, tokens,
//! whatever the user's shell exported) never reach a server: a read-only tool such as
//! `get-env` may run without asking, and would hand them to the model.

use std::collections::BTreeMap;
use std::ffi::OsString;

/// The variables a stdio server inherits from the app, when they are set.
#[cfg(not(windows))]
pub const INHERITED_VARIABLES: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// The variables a stdio server inherits from the app, when they are set.
#[cfg(windows)]
pub const INHERITED_VARIABLES: &[&str] = &[
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
    "PROGRAMFILES",
];

/// The whole environment of a server configured with `configured`: the inherited safe set
/// read from `current` (a shell function exported as a variable, a value starting with
/// `()`, is left out as the SDK does), then `configured`, which wins.
pub(crate) fn server_environment(
    current: impl IntoIterator<Item = (OsString, OsString)>,
    configured: &BTreeMap<String, String>,
) -> BTreeMap<OsString, OsString> {
    let mut env: BTreeMap<OsString, OsString> = current
        .into_iter()
        .filter(|(name, value)| {
            name.to_str().is_some_and(|name| INHERITED_VARIABLES.contains(&name))
                && !value.to_string_lossy().starts_with("()")
        })
        .collect();
    env.extend(configured.iter().map(|(name, value)| (OsString::from(name), OsString::from(value))));
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect()
    }

    #[cfg(not(windows))]
    #[test]
    fn audit_10_only_the_safe_set_and_the_configured_variables_reach_a_server() {
        let current = os(&[
            ("PATH", "/usr/bin"),
            ("HOME", "/home/ada"),
            ("OPENAI_API_KEY", "sk-secret"),
            ("AWS_SECRET_ACCESS_KEY", "hunter2"),
            ("SHELL", "() { :; }; echo pwned"),
        ]);
        let configured = BTreeMap::from([
            ("TOKEN".to_owned(), "configured".to_owned()),
            ("HOME".to_owned(), "/srv/server".to_owned()),
        ]);
        let env = server_environment(current, &configured);
        let shown: Vec<(String, String)> =
            env.iter().map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned())).collect();
        assert_eq!(
            shown,
            vec![
                ("HOME".to_owned(), "/srv/server".to_owned()),
                ("PATH".to_owned(), "/usr/bin".to_owned()),
                ("TOKEN".to_owned(), "configured".to_owned()),
            ],
            "no key of the app's, no exported shell function, and the server's own value wins"
        );
    }
}
