//! `agent-tls`: where every HTTP client of the host starts.
//!
//! reqwest speaks TLS through rustls. rustls' default crypto provider
//! (aws-lc) is 1.5–3.5 MB of the binary; `ring` is a fraction of that, so
//! reqwest is built without a provider (`rustls-no-provider`) and this crate
//! installs `ring` as the process's provider before a client is built.
//! reqwest panics when a client is built with no provider installed, so
//! every `reqwest::Client` of the host comes from [`client_builder`]
//! (docs/performance.md, "Binary size").
#![deny(missing_docs)]

use std::sync::Once;

/// A `reqwest::ClientBuilder`, with `ring` installed as the process's
/// rustls crypto provider first (once; a provider installed earlier by
/// someone else is kept).
pub fn client_builder() -> reqwest::ClientBuilder {
    install_provider();
    reqwest::Client::builder()
}

/// Installs `ring` as the process's rustls crypto provider, unless one is
/// installed already. Idempotent and cheap after the first call.
pub fn install_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Err means another provider was installed first: it stays, and
        // clients use it (the only other one would be a test's choice).
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without a provider installed, reqwest (built without one) panics
    /// when a client is built; through this crate it builds, and the
    /// process's provider is ring.
    #[test]
    fn a_client_builds_with_ring_installed() {
        let client = client_builder().build();
        assert!(client.is_ok(), "{client:?}");
        let provider = rustls::crypto::CryptoProvider::get_default().expect("a provider");
        let ring = rustls::crypto::ring::default_provider();
        assert_eq!(
            provider.cipher_suites.len(),
            ring.cipher_suites.len(),
            "the installed provider is ring's"
        );
        // A second call is harmless.
        assert!(client_builder().build().is_ok());
    }
}
