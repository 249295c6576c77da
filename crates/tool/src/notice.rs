use std::sync::{Arc, Mutex};

/// Something that happened outside any call (a late diagnostic, a dead resource) that the
/// model must still learn about; it rides on the next root result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// Who raised it, such as `fs` or `lsp`.
    pub source: String,
    /// One or two sentences for the model.
    pub text: String,
}

/// The run's queue of notices; cheap to clone and shared by every resource.
#[derive(Debug, Clone, Default)]
pub struct NoticeQueue {
    inner: Arc<Mutex<Vec<Notice>>>,
}

impl NoticeQueue {
    /// Queues a notice for the next root result.
    pub fn push(&self, source: &str, text: impl Into<String>) {
        let notice = Notice {
            source: source.to_string(),
            text: text.into(),
        };
        crate::cx::lock(&self.inner).push(notice);
    }

    /// Takes every queued notice, oldest first.
    pub fn drain(&self) -> Vec<Notice> {
        std::mem::take(&mut *crate::cx::lock(&self.inner))
    }
}
