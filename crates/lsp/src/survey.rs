//! Confirms, file by file, what a server of the whole workspace published, when the end of
//! its pass cannot be told: pyright ends its pass's progress whenever a pull is answered, so a
//! pull sent while its first pass runs leaves no sign of the pass's real end, and its early
//! publications (every file empty, then some with their import errors alone) would read as
//! each file's state. Each published file is pulled once; the answer is its real state.

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
                .wait_for(|h| (h.survey_wanted && !h.passed) || h.closed.is_some())
                .await
                .is_ok_and(|h| h.closed.is_none());
            if !open {
                return;
            }
            let Some(server) = weak.upgrade() else {
                return;
            };
            if !confirm_all(&server).await {
                // Tried again once the server has news (a busy server may answer then).
                let seq = server.heard.borrow().seq;
                drop(server);
                let news = heard.wait_for(|h| h.seq != seq || h.closed.is_some());
                if news.await.map(|_| ()).is_err() {
                    return;
                }
            }
        }
    });
}

/// Pulls every unconfirmed file, a few at a time, until none is left; false when a pull got
/// no answer (the server is busy past its deadline, or gone).
async fn confirm_all(server: &Server) -> bool {
    loop {
        let (uris, _) = server.heard.borrow().published.unconfirmed(ROUND);
        if uris.is_empty() {
            server.heard.send_modify(|h| h.apply(Event::Surveyed));
            return true;
        }
        for part in uris.chunks(AT_ONCE) {
            let each = part.iter().map(|uri| async move {
                let items = match uri_path(uri) {
                    Some(path) => server.pulled_within(&path, server.timeout).await?,
                    // Not a file it can be asked about: what it published is all there is.
                    None => server.heard.borrow().published.get(uri)?.items.to_vec(),
                };
                let uri = uri.to_string();
                server
                    .heard
                    .send_modify(|h| h.apply(Event::Pulled { uri, items }));
                Some(())
            });
            let answered = futures::future::join_all(each).await;
            if answered.iter().any(Option::is_none) {
                tracing::info!("{}: a file's state could not be confirmed", server.id);
                return false;
            }
            if server.peer.closed().is_some() {
                return false;
            }
        }
    }
}
