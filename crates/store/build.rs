//! `sqlx::migrate!` embeds `migrations/` at compile time; cargo does not know the macro
//! reads that folder, so a changed or added migration would leave a stale build.

fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
