//! Confirms, file by file, what a server of the whole workspace published, when the end of
//! its pass cannot be told: pyright counts each pull as analysis progress on the reporter of
//! its pass, and its progress ends and begins again mid-pass, with pulls or without, so its
//! early publications (every file empty, then some with their import errors alone) would read
//! as each file's state. Each published file is pulled once; the answer is its real state.

use std::collections::HashSet;
use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::answers::Pull;
use crate::heard::Event;
use crate::server::{Server, uri_path};

/// Pulls sent at once: few, so a write's own pulls wait behind at most these.
const AT_ONCE: usize = 4;
/// Files taken from the store per round.
const ROUND: usize = 64;
/// How long a survey whose every file went unanswered waits for news before asking again.
const AGAIN_AFTER: Duration = Duration::from_secs(1);

/// Confirms `server`'s files whenever some are unconfirmed; ends with the server.
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
/// are surveyed in turn); false once the server is gone. A file answered twice without a
/// report (pyright's "unchanged" for a file it published but no longer holds) is taken as
/// published, and logged; one not answered in time (a busy server) is asked again after the
/// others, never taken as confirmed.
async fn confirm_all(server: &Server) -> bool {
    let mut unchanged_once: HashSet<Arc<str>> = HashSet::new();
    let mut unanswered: HashSet<Arc<str>> = HashSet::new();
    loop {
        let (some, left) = server
            .heard
            .borrow()
            .published
            .unconfirmed(ROUND + unanswered.len());
        let uris: Vec<Arc<str>> = some
            .into_iter()
            .filter(|uri| !unanswered.contains(uri))
            .take(ROUND)
            .collect();
        tracing::debug!("{}: confirming {} of {left} files", server.id, uris.len());
        if left == 0 {
            return true;
        }
        if uris.is_empty() {
            // Every file left went unanswered: asked again once the server has news.
            unanswered.clear();
            let seq = server.heard.borrow().seq;
            server.until(AGAIN_AFTER, |h| h.seq != seq).await;
            continue;
        }
        for part in uris.chunks(AT_ONCE) {
            let each = part.iter().map(|uri| async move {
                match uri_path(uri) {
                    Some(path) => server.pull(&path, server.timeout).await,
                    None => Pull::NotFull,
                }
            });
            let answers = futures::future::join_all(each).await;
            for (uri, answer) in part.iter().zip(answers) {
                let items = match answer {
                    // Kept as confirmed by the pull itself.
                    Pull::Full(_) => continue,
                    Pull::NoAnswer => {
                        unanswered.insert(uri.clone());
                        continue;
                    }
                    Pull::NotFull if unchanged_once.insert(uri.clone()) => continue,
                    Pull::NotFull => {
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
