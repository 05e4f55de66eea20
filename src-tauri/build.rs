fn main() {
    // tauri.conf.json lives at the repository root; src-tauri/tauri.conf.json is a symlink
    // to it so relative paths in it (frontendDist, icons) resolve from src-tauri/.
    println!("cargo:rerun-if-changed=../tauri.conf.json");
    println!("cargo:rerun-if-changed=../ui/dist");
    tauri_build::build()
}
