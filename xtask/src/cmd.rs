//! Running external programs: echo the command line, run it, and say which one failed.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use anyhow::{Context, Result, bail};

/// A command line to run, with its working directory and extra environment.
pub struct Cmd {
    program: OsString,
    args: Vec<OsString>,
    dir: Option<PathBuf>,
    envs: Vec<(OsString, OsString)>,
}

impl Cmd {
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        Self { program: program.as_ref().to_owned(), args: Vec::new(), dir: None, envs: Vec::new() }
    }

    /// The cargo that is running xtask (so nested builds use the same toolchain).
    pub fn cargo() -> Self {
        Self::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args.extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    pub fn dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.dir = Some(dir.as_ref().to_owned());
        self
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.envs.push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// The command as a shell would show it (program name without its directory).
    pub fn display(&self) -> String {
        let program = Path::new(&self.program).file_name().unwrap_or(&self.program);
        let mut line = program.to_string_lossy().into_owned();
        for arg in &self.args {
            let arg = arg.to_string_lossy();
            line.push(' ');
            if arg.is_empty() || arg.contains([' ', '"', '\'', '$']) {
                line.push_str(&format!("'{arg}'"));
            } else {
                line.push_str(&arg);
            }
        }
        line
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        if let Some(dir) = &self.dir {
            command.current_dir(dir);
        }
        command.envs(self.envs.iter().map(|(k, v)| (k, v)));
        command
    }

    /// Runs with inherited stdio and returns the exit status.
    pub fn status(&self) -> Result<ExitStatus> {
        println!("$ {}", self.display());
        self.command().status().with_context(|| format!("could not start `{}`", self.display()))
    }

    /// Runs with inherited stdio; an unsuccessful exit is an error naming the command.
    pub fn run(&self) -> Result<()> {
        let status = self.status()?;
        if !status.success() {
            bail!("`{}` failed ({status})", self.display());
        }
        Ok(())
    }

    /// Runs silently; `true` when it started and exited successfully.
    pub fn succeeds(&self) -> bool {
        self.command()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Runs silently and returns stdout when it exits successfully.
    pub fn read(&self) -> Option<String> {
        let output = self.command().stdin(Stdio::null()).stderr(Stdio::null()).output().ok()?;
        output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// Starts in the background with stdout and stderr appended to `log`.
    pub fn spawn_logged(&self, log: &Path) -> Result<std::process::Child> {
        let file = std::fs::File::create(log).with_context(|| format!("could not create {}", log.display()))?;
        let stderr = file.try_clone()?;
        println!("$ {} > {}", self.display(), log.display());
        self.command()
            .stdin(Stdio::null())
            .stdout(file)
            .stderr(stderr)
            .spawn()
            .with_context(|| format!("could not start `{}`", self.display()))
    }
}

/// The first executable called `name` on PATH, then in cargo's bin dir (which a fresh
/// shell may not have on PATH yet).
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).chain(cargo_bin_dir()).map(|dir| dir.join(name)).find(|p| is_executable(p))
}

/// `$CARGO_HOME/bin`, where `cargo install` puts binaries.
pub fn cargo_bin_dir() -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    Some(home.join("bin"))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
