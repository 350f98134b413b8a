//! The one reading of a URL's origin (`scheme://host[:port]`), for every place that compares
//! `net:fetch` scopes: the `http` import, `--allow` entries, stored grants, the registry's
//! update plan.
//!
//! Two spellings of the same origin normalise to the same text:
//! - scheme and host case (`HTTPS://Example.COM` is `https://example.com`);
//! - default ports (`:80` for http, `:443` for https) are dropped;
//! - one trailing dot of a DNS name is dropped (`example.com.` is `example.com`);
//! - IPv6 addresses are bracketed and written in their canonical form (`[0:0::1]` is `[::1]`);
//! - non-ASCII host names are converted with IDNA (`bücher.example` is
//!   `xn--bcher-kva.example`), so a lookalike (`аpi.example.com`, with a Cyrillic `а`) is
//!   another origin;
//! - user info is not part of the origin: `https://allowed.com@evil.com` is `https://evil.com`.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

/// A normalised origin.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Origin {
    scheme: String,
    /// Lower-case ASCII, without a trailing dot; IPv6 in brackets.
    host: String,
    /// Only when not the scheme's default.
    port: Option<u16>,
}

/// The default port of `scheme`, if it has one.
pub(crate) fn default_port(scheme: &str) -> Option<u16> {
    match scheme.to_ascii_lowercase().as_str() {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        _ => None,
    }
}

/// A DNS name as compared: one trailing dot dropped, IDNA to ASCII for non-ASCII names,
/// lower case. `None` when IDNA refuses it.
pub(crate) fn dns_name(host: &str) -> Option<String> {
    let host = host.strip_suffix('.').unwrap_or(host);
    if host.is_ascii() {
        Some(host.to_ascii_lowercase())
    } else {
        idna::domain_to_ascii(host).ok()
    }
}

impl Origin {
    /// Reads the origin of `url` and returns it with the rest of the URL (path, query,
    /// fragment). `None` when `url` has no `scheme://host`, or a port that is not a number
    /// from 0 to 65535.
    pub fn split(url: &str) -> Option<(Origin, &str)> {
        let (scheme, rest) = url.split_once("://")?;
        let valid_scheme = scheme
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if !valid_scheme {
            return None;
        }
        let scheme = scheme.to_ascii_lowercase();
        // `\` ends the authority as `/` does (what an http client makes of it).
        let end = rest.find(['/', '\\', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
        let (host, port) = if let Some(after_bracket) = host_port.strip_prefix('[') {
            let (inner, after) = after_bracket.split_once(']')?;
            let port = match after {
                "" => None,
                p => Some(p.strip_prefix(':')?),
            };
            let host = match inner.parse::<Ipv6Addr>() {
                Ok(addr) => format!("[{addr}]"),
                Err(_) => format!("[{}]", inner.to_ascii_lowercase()),
            };
            (host, port)
        } else {
            let (h, p) = match host_port.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (host_port, None),
            };
            let host = match h.parse::<Ipv4Addr>() {
                Ok(addr) => addr.to_string(),
                Err(_) => dns_name(h)?,
            };
            (host, p)
        };
        if host.is_empty() || host.contains(':') && !host.starts_with('[') {
            return None;
        }
        let port = match port {
            None | Some("") => None,
            Some(p) if p.chars().all(|c| c.is_ascii_digit()) => Some(p.parse::<u16>().ok()?),
            Some(_) => return None,
        };
        let port = port.filter(|p| Some(*p) != default_port(&scheme));
        Some((Origin { scheme, host, port }, tail))
    }

    /// The origin of `url` (see [`Origin::split`]).
    pub fn of(url: &str) -> Option<Origin> {
        Origin::split(url).map(|(o, _)| o)
    }

    /// The scheme, lower case.
    pub fn scheme(&self) -> &str {
        &self.scheme
    }

    /// The host: lower-case ASCII, IPv6 in brackets.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port, or the scheme's default.
    pub fn port(&self) -> Option<u16> {
        self.port.or_else(|| default_port(&self.scheme))
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.scheme, self.host)?;
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        Ok(())
    }
}

/// The normalised origin of `url` as text, e.g. `https://example.com` for
/// `HTTPS://Example.COM.:443/x`. `None` when `url` has no `scheme://host`.
pub fn origin(url: &str) -> Option<String> {
    Origin::of(url).map(|o| o.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(url: &str) -> Option<String> {
        origin(url)
    }

    #[test]
    fn scheme_and_host_case_are_ignored() {
        assert_eq!(
            o("HTTPS://Example.COM/x").as_deref(),
            Some("https://example.com")
        );
    }

    #[test]
    fn default_ports_are_dropped_and_others_kept() {
        assert_eq!(
            o("https://example.com:443/").as_deref(),
            Some("https://example.com")
        );
        assert_eq!(
            o("http://example.com:80").as_deref(),
            Some("http://example.com")
        );
        assert_eq!(
            o("http://example.com:443").as_deref(),
            Some("http://example.com:443")
        );
        assert_eq!(
            o("https://example.com:8443").as_deref(),
            Some("https://example.com:8443")
        );
    }

    #[test]
    fn a_trailing_dot_is_dropped() {
        assert_eq!(
            o("https://api.example.com./v1").as_deref(),
            Some("https://api.example.com")
        );
    }

    #[test]
    fn ipv6_addresses_are_bracketed_and_canonical() {
        assert_eq!(o("http://[::1]:80/").as_deref(), Some("http://[::1]"));
        assert_eq!(o("http://[0:0::1]:81").as_deref(), Some("http://[::1]:81"));
        assert_eq!(
            o("http://[0:0:0:0:0:0:0:1]").as_deref(),
            Some("http://[::1]")
        );
        assert_eq!(o("http://[::1"), None);
    }

    #[test]
    fn non_ascii_names_go_through_idna_and_lookalikes_stay_apart() {
        assert_eq!(
            o("https://Bücher.example/").as_deref(),
            Some("https://xn--bcher-kva.example")
        );
        // A Cyrillic `а` in place of the Latin `a`: another origin.
        let lookalike = o("https://\u{430}pi.example.com").unwrap();
        assert_ne!(lookalike, "https://api.example.com");
        assert!(lookalike.starts_with("https://xn--"), "{lookalike}");
    }

    #[test]
    fn user_info_is_not_the_host() {
        assert_eq!(
            o("https://allowed.com@evil.com/").as_deref(),
            Some("https://evil.com")
        );
        assert_eq!(o("http://u:p@h:8080/").as_deref(), Some("http://h:8080"));
        assert_eq!(
            o("https://evil.test/@api.example.com").as_deref(),
            Some("https://evil.test")
        );
        assert_eq!(
            o("https://evil.test\\@api.example.com").as_deref(),
            Some("https://evil.test")
        );
    }

    #[test]
    fn what_is_not_an_origin_has_none() {
        assert_eq!(o("https://h:99999/"), None);
        assert_eq!(o("https:///path"), None);
        assert_eq!(o("1ttp://h"), None);
        assert_eq!(o("not a url"), None);
        assert_eq!(o("https://h:8o/"), None);
    }
}
