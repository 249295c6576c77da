//! Confirms, file by file, what a server of the whole workspace published, when the end of
//! its pass cannot be told: pyright ends its pass's progress whenever a pull is answered, so a
//! pull sent while its first pass runs leaves no sign of the pass's real end, and its early
//! publications (every file empty, then some with their import errors alone) would read as
//! each file's state. Each published file is pulled once; the answer is its real state.

use std::collections::HashSet;
use std::sync::{Arc, Weak};

use crate::heard::Event;
use crate::server::{Server, uri_path};

/// Pulls sent at once: few, so a write's own pulls wait behind at most these.
const AT_ONCE: usize = 4;
/// Files taken from the store per round.
const ROUND: usize = 64;

/// Watches `server` for the moment its pass's end cannot be told, and then confirms its files;
/// ends with the server.
pub(crate) fn start(server: &Arc<Server>) {
    if !server.confirms_by_pull() {
        return;
    }
    let mut heard = server.heard.subscribe();
    let weak: Weak<Server> = Arc::downgrade(server);
    tokio::spawn(async move {
        loop {
            let open = heard
                .wait_for(|h| h.wants_survey() || h.closed.is_some())
                .await
                .is_ok_and(|h| h.closed.is_none());
            if !open {
                return;
            }
            let Some(server) = weak.upgrade() else {
                return;
            };
            if !confirm_all(&server).await {
                return;
            }
        }
    });
}

/// Pulls every unconfirmed file, a few at a time, until none is left (files published later
/// are surveyed in turn); false once the server is gone. A file asked twice without a full
/// answer (pyright answers "unchanged" for a file it published but no longer holds) is taken
/// as published, and logged.
async fn confirm_all(server: &Server) -> bool {
    let mut failed_once: HashSet<Arc<str>> = HashSet::new();
    loop {
        let (uris, left) = server.heard.borrow().published.unconfirmed(ROUND);
        tracing::debug!("{}: confirming {} of {left} files", server.id, uris.len());
        if uris.is_empty() {
            return true;
        }
        for part in uris.chunks(AT_ONCE) {
            let each = part.iter().map(|uri| async move {
                match uri_path(uri) {
                    Some(path) => server.pulled_within(&path, server.timeout).await,
                    None => None,
                }
            });
            let answers = futures::future::join_all(each).await;
            for (uri, answer) in part.iter().zip(answers) {
                let items = match answer {
                    Some(items) => items,
                    None if failed_once.insert(uri.clone()) => continue,
                    None => {
                        tracing::info!("{}: {uri} could not be confirmed", server.id);
                        let published = server.heard.borrow().published.get(uri).cloned();
                        published.map_or_else(Vec::new, |p| p.items.to_vec())
                    }
                };
                let uri = uri.to_string();
                server
                    .heard
                    .send_modify(|h| h.apply(Event::Pulled { uri, items }));
            }
            if server.peer.closed().is_some() {
                return false;
            }
        }
    }
}
