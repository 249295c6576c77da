//! Speaking to a child over its pipes: `Content-Length` framing (`frame`) and one
//! request/response engine (`rpc`: deadlines, cancellation, the other side's requests answered,
//! pending requests failed at once when the connection ends), generic over its envelope:
//! `jsonrpc` for language servers, `dap` for debug adapters.

mod dap;
mod frame;
mod jsonrpc;
mod payload;
mod rpc;

pub use dap::Dap;
pub use frame::{FrameError, MAX_FRAME, read_frame, write_frame};
pub use jsonrpc::{JsonRpc, Peer, codes};
pub use payload::Payload;
pub use rpc::{
    BoxFuture, Engine, Envelope, Id, Inbound, Incoming, Numbers, Pending, Reply, ResponseError,
    RpcError,
};
