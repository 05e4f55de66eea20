//! Where things are in the repository.

use std::path::{Path, PathBuf};

pub struct Repo {
    root: PathBuf,
}

impl Repo {
    /// The repository this xtask was built from (xtask/ sits at its root).
    pub fn locate() -> Self {
        let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        Self { root: manifest_dir.parent().unwrap_or(manifest_dir).to_owned() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn ui(&self) -> PathBuf {
        self.root.join("ui")
    }

    /// Cargo's target dir, honouring `CARGO_TARGET_DIR`.
    pub fn target_dir(&self) -> PathBuf {
        match std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
            Some(dir) => self.root.join(dir),
            None => self.root.join("target"),
        }
    }

    /// A binary built by cargo in `profile` ("debug" or "release").
    pub fn binary(&self, profile: &str, name: &str) -> PathBuf {
        self.target_dir().join(profile).join(name)
    }

    pub fn artifacts(&self) -> PathBuf {
        self.root.join("test-artifacts")
    }
}
