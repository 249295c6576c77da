use std::sync::{Arc, Mutex};

/// How many distinct notices wait at most; beyond it the oldest are dropped and counted.
pub const MAX_NOTICES: usize = 20;

/// Something that happened outside any call (a late diagnostic, a dead resource) that the
/// model must still learn about; it rides on the next root result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// Who raised it, such as `fs` or `lsp`.
    pub source: String,
    /// What it is about, so repeats merge (the text itself when no key is given).
    pub key: String,
    /// One or two sentences for the model: the latest of the merged ones.
    pub text: String,
    /// How many notices were merged into this one.
    pub count: usize,
}

impl Notice {
    /// The line the model reads: `- [source] text`, with `(×N)` for merged repeats.
    pub fn line(&self) -> String {
        match self.count {
            1 => format!("- [{}] {}", self.source, self.text),
            n => format!("- [{}] {} (×{n})", self.source, self.text),
        }
    }
}

#[derive(Debug, Default)]
struct Queue {
    notices: Vec<Notice>,
    dropped: usize,
}

/// The run's queue of notices; cheap to clone and shared by every resource. A resource that
/// restarts in a loop cannot flood the model: repeats merge and the queue is bounded.
#[derive(Debug, Clone, Default)]
pub struct NoticeQueue {
    inner: Arc<Mutex<Queue>>,
}

impl NoticeQueue {
    /// Queues a notice for the next root result; an identical queued one is merged with it.
    pub fn push(&self, source: &str, text: impl Into<String>) {
        let text = text.into();
        self.push_keyed(source, &text.clone(), text);
    }

    /// Queues a notice that merges with any queued notice of the same source and key, keeping
    /// the latest text (say, key = a server's name, text = why it restarted).
    pub fn push_keyed(&self, source: &str, key: &str, text: impl Into<String>) {
        let mut q = tether_base::lock(&self.inner);
        let text = text.into();
        if let Some(n) = q
            .notices
            .iter_mut()
            .find(|n| n.source == source && n.key == key)
        {
            n.text = text;
            n.count += 1;
            return;
        }
        if q.notices.len() == MAX_NOTICES {
            q.notices.remove(0);
            q.dropped += 1;
        }
        q.notices.push(Notice {
            source: source.to_string(),
            key: key.to_string(),
            text,
            count: 1,
        });
    }

    /// Takes every queued notice, oldest first, and how many older ones the cap dropped.
    pub fn drain(&self) -> (Vec<Notice>, usize) {
        let mut q = tether_base::lock(&self.inner);
        let dropped = std::mem::take(&mut q.dropped);
        (std::mem::take(&mut q.notices), dropped)
    }

    /// Takes every queued notice as the block a result ends with (`Notices:` and a line each,
    /// after a line counting the dropped ones); `None` when there is none.
    pub fn drain_block(&self) -> Option<String> {
        let (notices, dropped) = self.drain();
        if notices.is_empty() {
            return None;
        }
        let mut lines: Vec<String> = notices.iter().map(|n| n.line()).collect();
        if dropped > 0 {
            lines.insert(0, format!("- ({dropped} older notices were dropped)"));
        }
        Some(format!("Notices:\n{}", lines.join("\n")))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn fifty_identical_notices_reach_the_model_as_one() {
        let q = NoticeQueue::default();
        for _ in 0..50 {
            q.push("lsp", "rust-analyzer exited; restarting");
        }
        let (notices, dropped) = q.drain();
        assert_eq!(dropped, 0);
        assert_eq!(notices.len(), 1);
        assert_eq!(
            notices[0].line(),
            "- [lsp] rust-analyzer exited; restarting (×50)"
        );
    }

    #[test]
    fn keyed_notices_keep_the_latest_text_and_the_queue_is_bounded() {
        let q = NoticeQueue::default();
        q.push_keyed("lsp", "ra", "restart 1");
        q.push_keyed("lsp", "ra", "restart 2");
        for i in 0..MAX_NOTICES + 5 {
            q.push("fs", format!("notice {i}"));
        }
        let (notices, dropped) = q.drain();
        assert_eq!(notices.len(), MAX_NOTICES);
        assert_eq!(
            dropped, 6,
            "the merged lsp notice and five fs ones went first"
        );
        assert_eq!(notices[0].text, "notice 5");
        assert_eq!(q.drain().0.len(), 0);
    }
}
