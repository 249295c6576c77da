//! A terminal cannot show a result's images, so `tether call` (here or through the host) saves each one under the
//! workspace's `.tether/images/` and prints its path where the image was.

use std::path::Path;

use tether::{Block, ToolOutput};

static SAVED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The result as text, each image replaced by the path it was saved at (or why it was not),
/// and the saved paths relative to `root`.
pub fn text_with_saved_images(out: &ToolOutput, root: &Path) -> (String, Vec<String>) {
    let mut parts = Vec::new();
    let mut saved = Vec::new();
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    for block in out.blocks() {
        match block {
            Block::Text(text) => parts.push(text.clone()),
            Block::Png(png) => {
                // A host saves for many calls in one process, so the count is the process's.
                let n = SAVED.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                let rel = format!(".tether/images/{stamp}-{}-{n}.png", std::process::id());
                let path = root.join(&rel);
                let written = path
                    .parent()
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .and_then(|()| std::fs::write(&path, png));
                match written {
                    Ok(()) => {
                        parts.push(format!("[image: PNG, {} bytes, saved to {rel}]", png.len()));
                        saved.push(rel);
                    }
                    Err(e) => parts.push(format!(
                        "[image: PNG, {} bytes, not saved: {}: {e}]",
                        png.len(),
                        path.display()
                    )),
                }
            }
            _ => parts.push("[a result block this version cannot print]".into()),
        }
    }
    (parts.join("\n\n"), saved)
}
