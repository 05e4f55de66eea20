use std::env;
use std::process::Command;

fn main() {
    // tauri.conf.json lives at the repository root; src-tauri/tauri.conf.json is a symlink
    // to it so relative paths in it (frontendDist, icons) resolve from src-tauri/.
    println!("cargo:rerun-if-changed=../tauri.conf.json");
    println!("cargo:rerun-if-changed=../ui/dist");
    pack_relative_relocations();
    tauri_build::build()
}

/// The binary is position-independent, so every pointer in its data (vtables, string
/// tables) needs a relocation at start: 40,000 of them at 24 bytes each were 0.94 MB of
/// the release binary. Packed (DT_RELR) they take 11 KB. Only glibc 2.36 and later read
/// packed relocations (an older one refuses the binary by name, `GLIBC_ABI_DT_RELR`), so
/// they are used only when the machine building for itself has such a glibc: the binary
/// always runs where it was built.
fn pack_relative_relocations() {
    let target_is_host = env::var("TARGET").ok() == env::var("HOST").ok();
    let gnu_linux = env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux")
        && env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|libc| libc == "gnu");
    if target_is_host && gnu_linux && host_glibc().is_some_and(|version| version >= (2, 36)) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// The host's glibc version, from `getconf GNU_LIBC_VERSION` ("glibc 2.36").
fn host_glibc() -> Option<(u32, u32)> {
    let output = Command::new("getconf").arg("GNU_LIBC_VERSION").output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let (major, minor) = text.trim().strip_prefix("glibc ")?.split_once('.')?;
    Some((major.parse().ok()?, minor.split('.').next()?.parse().ok()?))
}
