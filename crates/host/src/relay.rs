//! `tether serve` through the host: this process becomes the small `tether-relay` binary,
//! which relays MCP lines and answers for a host that died; when that binary is not
//! installed, the same relay runs here.

use std::io::Read;

use crate::client::Attachment;
use crate::place::Place;

/// Relays MCP between this process's stdin/stdout and the host until the client goes away.
pub async fn relay_mcp(place: &Place, at: Attachment) -> Result<(), String> {
    let Attachment { read, write, .. } = at;
    // Lines the host sent after its reply, already read here: only this process has them.
    let early = read.buffer().to_vec();
    let taken = |e: &dyn std::fmt::Display| format!("cannot take over the host's socket: {e}");
    let host = read
        .into_inner()
        .reunite(write)
        .map_err(|e| taken(&e))?
        .into_std()
        .map_err(|e| taken(&e))?;
    host.set_nonblocking(false).map_err(|e| taken(&e))?;
    if early.is_empty() {
        let why = tether_relay::exec(&host, &place.root, &place.log);
        tracing::debug!("relaying in this process: {why}");
    }
    let from_host = std::io::Cursor::new(early).chain(
        host.try_clone()
            .map_err(|e| format!("cannot read the host's socket: {e}"))?,
    );
    let (root, log) = (place.root.clone(), place.log.clone());
    tokio::task::spawn_blocking(move || {
        tether_relay::relay(from_host, host, move |how| {
            tether_relay::died(&root, &log, how)
        })
    })
    .await
    .map_err(|e| format!("the relay stopped: {e}"))
}
