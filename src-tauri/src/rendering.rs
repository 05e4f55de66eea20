//! WebKitGTK's compositing on a machine without a GPU.
//!
//! With no GPU, WebKitGTK still composites the page through OpenGL, rendered on the CPU by
//! Mesa's llvmpipe: every repaint, down to the composer's blinking caret, redraws the whole
//! window in software. Measured under Xvfb (no GPU; `docs/benchmarks.md`, "Desktop"), an
//! idle window with the composer focused used 4.7–9.7 % of a core that way and 0.5–1.2 %
//! with compositing off, where a blink repaints only the caret's few pixels. So when the
//! machine has no DRM render node (`/dev/dri/renderD*`: virtual machines, remote desktops,
//! containers), the desktop turns WebKit's compositing mode off before the first web view
//! exists. A machine with a GPU keeps it (scrolling and animations are then composited on
//! the GPU), and a user who sets `WEBKIT_DISABLE_COMPOSITING_MODE` themselves, to any
//! value, decides either way.

use std::path::Path;

/// The variable WebKitGTK reads once, when its first web view is made.
const VARIABLE: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";

/// What [`choose_compositing`] decided, for the log once logging is up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compositing {
    /// The user's own `WEBKIT_DISABLE_COMPOSITING_MODE` is kept.
    UserChoice,
    /// A GPU is there: WebKit composites on it.
    Gpu,
    /// No GPU: compositing turned off.
    OffWithoutGpu,
}

/// Turns WebKit's compositing off when this machine has no GPU (see the module docs).
///
/// # Safety
/// Changes the process environment: call it before any other thread exists (first thing in
/// the desktop's start, before Tauri, GTK or an async runtime starts one).
pub unsafe fn choose_compositing() -> Compositing {
    let choice = decide(std::env::var_os(VARIABLE).is_some(), has_render_node(Path::new("/dev/dri")));
    if choice == Compositing::OffWithoutGpu {
        // SAFETY: the caller guarantees no other thread reads the environment meanwhile.
        unsafe { std::env::set_var(VARIABLE, "1") };
    }
    choice
}

fn decide(user_set: bool, gpu: bool) -> Compositing {
    match (user_set, gpu) {
        (true, _) => Compositing::UserChoice,
        (false, true) => Compositing::Gpu,
        (false, false) => Compositing::OffWithoutGpu,
    }
}

/// Whether `dir` (`/dev/dri`) has a render node, the device a GPU's OpenGL renders through.
fn has_render_node(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .map(|entries| entries.flatten().any(|entry| entry.file_name().to_string_lossy().starts_with("renderD")))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compositing_is_off_only_without_a_gpu_and_without_the_users_choice() {
        assert_eq!(decide(false, false), Compositing::OffWithoutGpu);
        assert_eq!(decide(false, true), Compositing::Gpu);
        assert_eq!(decide(true, false), Compositing::UserChoice);
        assert_eq!(decide(true, true), Compositing::UserChoice);
    }

    #[test]
    fn a_render_node_is_a_renderd_device() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!has_render_node(&dir.path().join("missing")), "no /dev/dri at all");
        std::fs::write(dir.path().join("card0"), "").unwrap();
        assert!(!has_render_node(dir.path()), "a display card alone renders nothing");
        std::fs::write(dir.path().join("renderD128"), "").unwrap();
        assert!(has_render_node(dir.path()));
    }
}
