//! Pulls with the real pyright: a file nothing changed is answered "unchanged" and read from
//! the report its result id names, and a file made again is never answered from a report of
//! the file it replaced.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;

use lsp_types::{FileChangeType, FileEvent};
use tether_lsp::{LspConfig, Supervisor};

const LIMIT: Duration = Duration::from_secs(60);

fn pyright_on_path() {
    let path = std::env::var_os("PATH").unwrap_or_default();
    assert!(
        std::env::split_paths(&path).any(|d| d.join("pyright-langserver").is_file()),
        "pyright-langserver is not on PATH: run scripts/test, which installs it"
    );
}

fn event(path: &Path, typ: FileChangeType) -> FileEvent {
    let uri = format!("file://{}", path.display())
        .parse()
        .expect("a file URI");
    FileEvent { uri, typ }
}

macro_rules! messages {
    ($items:expr) => {
        $items
            .iter()
            .map(|d| d.message.clone())
            .collect::<Vec<String>>()
    };
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_of_an_unchanged_file_reads_its_report_and_a_file_made_again_is_asked_afresh() {
    pyright_on_path();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"p\"\n").unwrap();
    let opened = root.join("a.py");
    std::fs::write(&opened, "import b\n").unwrap();
    let other = root.join("b.py");
    std::fs::write(&other, "count: int = \"three\"\n").unwrap();

    let supervisor = Supervisor::new(
        LspConfig::default(),
        root.clone(),
        true,
        true,
        vec![],
        false,
    );
    let server = supervisor.server_for("python", &opened).await.unwrap();
    server.sync(&opened, "import b\n").await.unwrap();

    // Until pyright holds the file (its listing is under way), it answers with no report.
    let end = std::time::Instant::now() + LIMIT;
    let first = loop {
        if let Some(items) = server.pulled_within(&other, LIMIT).await {
            break items;
        }
        assert!(
            std::time::Instant::now() < end,
            "pyright never reported on b.py"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(first.len(), 1, "{:?}", messages!(first));
    let again = server.pulled_within(&other, LIMIT).await.expect("a report");
    assert_eq!(messages!(again), messages!(first));
    assert_eq!(
        server.pulls_unchanged(),
        1,
        "the second pull was answered in full"
    );

    // The file is deleted and made again, clean: pyright makes its analysis afresh and numbers
    // its reports from the start, so the old result id may name a new report.
    // Once pyright has checked the new file by itself (it publishes it), the new analysis
    // has reached the number the old report had.
    let seq = server.snapshot().seq;
    std::fs::remove_file(&other).unwrap();
    server
        .tell_watched(vec![event(&other, FileChangeType::DELETED)])
        .await;
    std::fs::write(&other, "count: int = 3\n").unwrap();
    server
        .tell_watched(vec![event(&other, FileChangeType::CREATED)])
        .await;
    let end = std::time::Instant::now() + LIMIT;
    while !server
        .published_since(seq)
        .iter()
        .any(|said| said.path == other)
    {
        assert!(
            std::time::Instant::now() < end,
            "pyright never published b.py again"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let made_again = server.pulled_within(&other, LIMIT).await.expect("a report");
    assert!(made_again.is_empty(), "{:?}", messages!(made_again));
    assert_eq!(server.pulls_unchanged(), 1);

    supervisor.stop(None, Duration::from_secs(10)).await;
}
