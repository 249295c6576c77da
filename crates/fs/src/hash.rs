//! Content hashes.

use std::fmt;

/// 128-bit xxh3 hash of a file's bytes, used to detect that a file changed since it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct ContentHash(pub u128);

impl fmt::Display for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

/// Hashes bytes so later writes can check the file still holds them.
pub fn hash_bytes(bytes: &[u8]) -> ContentHash {
    ContentHash(xxhash_rust::xxh3::xxh3_128(bytes))
}
