//! A worker's transcript: one file per worker per run of tether, named with the run's id, so
//! runs never share one. Each of the worker's runs in it begins with a header and ends with a
//! line saying how it ended; a run's output that arrives after its end line is dropped.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tether_base::lock;

/// One worker's transcript in this run of tether.
#[derive(Debug)]
pub struct Transcript {
    path: PathBuf,
    open: Mutex<Open>,
}

#[derive(Debug, Default)]
struct Open {
    file: Option<File>,
    /// The worker's run now written, between its header and its end line.
    run: Option<u32>,
}

impl Transcript {
    /// The transcript at `path`, not created until its first run begins.
    pub fn new(path: PathBuf) -> Self {
        Transcript {
            path,
            open: Mutex::default(),
        }
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        lock(&self.open)
    }

    /// Writes run `run`'s header, creating the file on the first run; why it cannot be written.
    pub fn begin(&self, run: u32) -> Result<(), String> {
        let mut open = self.lock();
        if open.file.is_none() {
            if let Some(parent) = self.path.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)
                .map_err(|e| format!("cannot open its transcript {}: {e}", self.path.display()))?;
            open.file = Some(file);
        }
        open.run = Some(run);
        write(&mut open, &format!("--- run {run} ---"));
        Ok(())
    }

    /// Appends a line of run `run`'s output, unless that run has already ended.
    pub fn line(&self, run: u32, line: &str) {
        let mut open = self.lock();
        if open.run == Some(run) {
            write(&mut open, line);
        }
    }

    /// Writes run `run`'s end line (`--- run N how ---`), once, after everything else of it.
    pub fn end(&self, run: u32, how: &str) {
        let mut open = self.lock();
        if open.run == Some(run) {
            write(&mut open, &format!("--- run {run} {how} ---"));
            open.run = None;
        }
    }
}

fn write(open: &mut Open, line: &str) {
    if let Some(file) = &mut open.file {
        let _ = writeln!(file, "{line}");
    }
}
