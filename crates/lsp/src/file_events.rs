//! What a server is told of files created, deleted or changed on disk, and for a server whose
//! queries search the files it has listed (pyright), when that listing is stale.

use std::path::Path;

use lsp_types as lsp;
use tether_base::lock;

use crate::heard::Event;
use crate::protocol;
use crate::server::{Server, glob_match, uri_path};

/// Changes per `didChangeWatchedFiles` message, at most: a branch switch changes thousands.
const WATCHED_PER_MESSAGE: usize = 1000;

impl Server {
    /// Whether the creation of `path` is news to the server: true the first time a creation is
    /// told, and again after a deletion was.
    pub(crate) fn creation_is_news(&self, path: &Path, kind: lsp::FileChangeType) -> bool {
        let mut told = lock(&self.told_created);
        match kind {
            lsp::FileChangeType::CREATED => told.insert(path.to_path_buf()),
            lsp::FileChangeType::DELETED => {
                told.remove(path);
                true
            }
            _ => false,
        }
    }

    /// Tells the server that `path`, deleted or moved away by a write, is gone: a document it
    /// holds open is closed, so neither it nor its importers are answered from the old text.
    pub async fn tell_gone(&self, path: &Path) {
        let Ok(uri) = protocol::uri(path) else {
            return;
        };
        if self.open.lock().await.remove(path).is_some() {
            let text_document = lsp::TextDocumentIdentifier { uri: uri.clone() };
            let params = lsp::DidCloseTextDocumentParams { text_document };
            if let Err(why) = self
                .notify::<lsp::notification::DidCloseTextDocument>(params)
                .await
            {
                tracing::warn!("closing {}: {why}", path.display());
            }
        }
        if self.creation_is_news(path, lsp::FileChangeType::DELETED) {
            let typ = lsp::FileChangeType::DELETED;
            self.tell_watched(vec![lsp::FileEvent { uri, typ }]).await;
        }
    }

    /// Tells a server of the whole workspace, once, that `path` exists: it resolves imports
    /// from its own listing of the disk, and a module written just now (or created outside a
    /// moment ago, before the watch told it) would otherwise be unresolved for the files that
    /// import it.
    pub async fn tell_exists(&self, path: &Path) {
        if !self.workspace_mode || !self.creation_is_news(path, lsp::FileChangeType::CREATED) {
            return;
        }
        let Ok(uri) = protocol::uri(path) else {
            return;
        };
        let changes = vec![lsp::FileEvent {
            uri,
            typ: lsp::FileChangeType::CREATED,
        }];
        self.tell_watched(changes).await;
    }

    /// Tells the server of files changed on disk, a thousand a message. A creation or deletion
    /// of a file it lists makes its listing stale until it logs a new one after a barrier
    /// behind the news: pyright, asked right after, answers from the old listing.
    pub async fn tell_watched(&self, changes: Vec<lsp::FileEvent>) {
        let extensions = self.extensions();
        let relists = self.queries_on_demand
            && changes.iter().any(|c| {
                c.typ != lsp::FileChangeType::CHANGED && self.listable(&c.uri, &extensions)
            });
        let _in_order = self.telling.lock().await;
        let asked = relists.then(|| {
            let mut asked = 0;
            self.heard.send_modify(|h| {
                h.apply(Event::Relist);
                asked = h.relists;
            });
            asked
        });
        for part in changes.chunks(WATCHED_PER_MESSAGE) {
            let params = lsp::DidChangeWatchedFilesParams {
                changes: part.to_vec(),
            };
            let _ = self
                .notify::<lsp_types::notification::DidChangeWatchedFiles>(params)
                .await;
        }
        if let Some(asked) = asked
            && self.barrier().await
        {
            self.heard
                .send_modify(|h| h.apply(Event::RelistBarrier { asked }));
        }
    }

    /// Whether the file at `uri` is one the server lists: of its languages (`extensions`), and
    /// in no folder it leaves out.
    fn listable(&self, uri: &lsp::Uri, extensions: &[String]) -> bool {
        let Some(path) = uri_path(uri.as_str()) else {
            return false;
        };
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        // Its folders below the root only: the root itself may sit in a hidden folder.
        let Ok(inside) = path.strip_prefix(&self.root) else {
            return false;
        };
        let parents = inside.parent().into_iter().flat_map(Path::components);
        extensions.iter().any(|e| e == ext)
            && !parents
                .filter_map(|c| c.as_os_str().to_str())
                .any(|dir| self.unlisted_dirs.iter().any(|p| glob_match(p, dir)))
    }
}
