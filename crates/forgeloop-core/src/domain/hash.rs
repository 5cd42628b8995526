//! The one hex sha256 the documents carry (outbox texts, replies, commands): a leaf module, so
//! `state` and `commands` can both use it without importing each other.

use sha2::{Digest, Sha256};

/// The sha256 of `bytes`, as 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}
