//! Entries of the manifest's `hosts:` list: the allowlist of the `http`
//! import (permission `net:fetch`).

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// One allowed origin: `scheme://host[:port]`, where the host may start with
/// a `*.` wildcard.
///
/// - The scheme is `http` or `https`.
/// - The host is a DNS name (letters, digits and hyphens in dot-separated
///   labels), an IPv4 address, or a bracketed IPv6 address. Names are
///   compared case-insensitively.
/// - `*.example.org` matches any name *below* `example.org`
///   (`api.example.org`, `a.b.example.org`) but not `example.org` itself; at
///   least two labels must follow the wildcard, so `*.com` is refused.
/// - Without a port the scheme's default port (80 or 443) is meant, so
///   `https://example.org` does not allow `https://example.org:8443`.
/// - No path, query, fragment or user info.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HostPattern {
    scheme: String,
    host: String,
    wildcard: bool,
    ipv6: bool,
    port: Option<u16>,
}

const EXPECTED: &str =
    "expected scheme://host[:port], e.g. `https://api.example.com` or `https://*.example.org:8443`";

use crate::origin::{default_port, dns_name};

fn check_dns_name(pattern: &str, host: &str) -> Result<(), String> {
    if host.len() > 253 {
        return Err(format!(
            "`{pattern}`: the host name is longer than 253 characters"
        ));
    }
    for label in host.split('.') {
        let valid = !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !valid {
            return Err(format!(
                "`{pattern}`: `{host}` is not a valid host name (expected dot-separated labels of letters, digits and inner hyphens)"
            ));
        }
    }
    Ok(())
}

impl HostPattern {
    /// Parse one `hosts:` entry. The error says what is wrong and what is
    /// expected.
    pub fn parse(pattern: &str) -> Result<HostPattern, String> {
        let Some((scheme, rest)) = pattern.split_once("://") else {
            return Err(format!("`{pattern}` has no scheme; {EXPECTED}"));
        };
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(format!(
                "`{pattern}`: scheme `{scheme}` is not allowed (expected http or https)"
            ));
        }
        if rest.is_empty() {
            return Err(format!("`{pattern}` has no host; {EXPECTED}"));
        }
        if rest.chars().any(|c| {
            matches!(c, '/' | '?' | '#' | '@' | '\\') || c.is_whitespace() || c.is_control()
        }) {
            return Err(format!(
                "`{pattern}` has more than an origin (a path, query, user info or whitespace); {EXPECTED}"
            ));
        }
        let (host, port) = if let Some(bracketed) = rest.strip_prefix('[') {
            let Some((inside, after)) = bracketed.split_once(']') else {
                return Err(format!("`{pattern}`: unclosed `[` in an IPv6 address"));
            };
            let port = if after.is_empty() {
                None
            } else if let Some(p) = after.strip_prefix(':') {
                Some(p)
            } else {
                return Err(format!(
                    "`{pattern}`: unexpected `{after}` after the IPv6 address"
                ));
            };
            let addr: Ipv6Addr = inside
                .parse()
                .map_err(|_| format!("`{pattern}`: `{inside}` is not an IPv6 address"))?;
            (addr.to_string(), port)
        } else {
            match rest.split_once(':') {
                Some((h, p)) => (h.to_ascii_lowercase(), Some(p)),
                None => (rest.to_ascii_lowercase(), None),
            }
        };
        let port = match port {
            None => None,
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) => Some(n),
                _ => {
                    return Err(format!(
                        "`{pattern}`: `{p}` is not a port (expected a number from 1 to 65535)"
                    ));
                }
            },
        };
        let ipv6 = rest.starts_with('[');
        if ipv6 {
            return Ok(HostPattern {
                scheme,
                host,
                wildcard: false,
                ipv6,
                port,
            });
        }
        let (wildcard, name) = match host.strip_prefix("*.") {
            Some(name) => (true, name.to_string()),
            None => (false, host.clone()),
        };
        if name.contains('*') {
            return Err(format!(
                "`{pattern}`: only a leading `*.` wildcard is allowed, e.g. `https://*.example.org`"
            ));
        }
        // The name as compared (trailing dot, IDNA, case): see `crate::origin`.
        let name = dns_name(&name).ok_or_else(|| {
            format!("`{pattern}`: `{name}` is not a valid host name (IDNA refuses it)")
        })?;
        if name.is_empty() {
            return Err(format!("`{pattern}` has no host; {EXPECTED}"));
        }
        let numeric_tld = name
            .rsplit('.')
            .next()
            .is_some_and(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()));
        if numeric_tld {
            if name.parse::<Ipv4Addr>().is_err() {
                return Err(format!("`{pattern}`: `{name}` is not a valid IPv4 address"));
            }
            if wildcard {
                return Err(format!(
                    "`{pattern}`: a `*.` wildcard needs a host name, not an IP address"
                ));
            }
        } else {
            check_dns_name(pattern, &name)?;
            if wildcard && name.split('.').count() < 2 {
                return Err(format!(
                    "`{pattern}` is too broad: a `*.` wildcard must be followed by at least two labels, e.g. `*.example.org`"
                ));
            }
        }
        Ok(HostPattern {
            scheme,
            host: name,
            wildcard,
            ipv6,
            port,
        })
    }

    /// `http` or `https`.
    pub fn scheme(&self) -> &str {
        &self.scheme
    }

    /// The host without the `*.` wildcard (and without brackets for IPv6).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Whether the pattern started with `*.` (matches names below `host`).
    pub fn is_wildcard(&self) -> bool {
        self.wildcard
    }

    /// The port written in the pattern, if any.
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// The port the pattern allows: the written one, or the scheme's default.
    pub fn effective_port(&self) -> u16 {
        self.port
            .or_else(|| default_port(&self.scheme))
            .unwrap_or(443)
    }

    /// Whether a request to `scheme://host[:port]` is allowed by this pattern.
    /// `port` `None` means the scheme's default port. `host` may be
    /// bracketed (IPv6) and may end with a dot; case is ignored.
    pub fn matches(&self, scheme: &str, host: &str, port: Option<u16>) -> bool {
        if !scheme.eq_ignore_ascii_case(&self.scheme) {
            return false;
        }
        if port.or_else(|| default_port(scheme)) != Some(self.effective_port()) {
            return false;
        }
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        let Some(host) = dns_name(host) else {
            return false;
        };
        if self.ipv6 {
            return host
                .parse::<Ipv6Addr>()
                .is_ok_and(|a| a.to_string() == self.host);
        }
        if self.wildcard {
            host.len() > self.host.len() + 1
                && host.ends_with(&self.host)
                && host[..host.len() - self.host.len()].ends_with('.')
        } else {
            host == self.host
        }
    }
}

impl HostPattern {
    /// Whether every origin this pattern allows is one `self` allows too: the same scheme
    /// and port, and the same host — or, for a wildcard `self`, a host below its name.
    pub fn covers(&self, other: &HostPattern) -> bool {
        if self.scheme != other.scheme
            || self.effective_port() != other.effective_port()
            || self.ipv6 != other.ipv6
        {
            return false;
        }
        if !self.wildcard {
            return !other.wildcard && self.host == other.host;
        }
        (other.wildcard && other.host == self.host)
            || (other.host.len() > self.host.len() + 1
                && other.host.ends_with(&self.host)
                && other.host[..other.host.len() - self.host.len()].ends_with('.'))
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://", self.scheme)?;
        if self.wildcard {
            f.write_str("*.")?;
        }
        if self.ipv6 {
            write!(f, "[{}]", self.host)?;
        } else {
            f.write_str(&self.host)?;
        }
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        Ok(())
    }
}

impl FromStr for HostPattern {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        HostPattern::parse(s)
    }
}

impl serde::Serialize for HostPattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> HostPattern {
        HostPattern::parse(s).unwrap()
    }

    #[test]
    fn exact_host_matches_only_itself_on_the_default_port() {
        let h = p("https://api.example.com");
        assert!(h.matches("https", "api.example.com", None));
        assert!(h.matches("HTTPS", "API.Example.com.", Some(443)));
        assert!(!h.matches("https", "api.example.com", Some(8443)));
        assert!(!h.matches("http", "api.example.com", None));
        assert!(!h.matches("https", "example.com", None));
        assert!(!h.matches("https", "evil-api.example.com", None));
        assert_eq!(h.effective_port(), 443);
        assert_eq!(h.to_string(), "https://api.example.com");
    }

    #[test]
    fn wildcard_matches_names_below_but_not_the_name_itself() {
        let h = p("https://*.Example.org:8443");
        assert!(h.is_wildcard());
        assert_eq!(h.host(), "example.org");
        assert_eq!(h.port(), Some(8443));
        assert!(h.matches("https", "a.example.org", Some(8443)));
        assert!(h.matches("https", "a.b.example.org", Some(8443)));
        assert!(!h.matches("https", "example.org", Some(8443)));
        assert!(!h.matches("https", "badexample.org", Some(8443)));
        assert!(!h.matches("https", "a.example.org", None));
        assert_eq!(h.to_string(), "https://*.example.org:8443");
    }

    #[test]
    fn ip_addresses_are_accepted() {
        let v4 = p("http://127.0.0.1:8080");
        assert!(v4.matches("http", "127.0.0.1", Some(8080)));
        let v6 = p("http://[::1]:3000");
        assert!(v6.matches("http", "[::1]", Some(3000)));
        assert!(v6.matches("http", "0:0:0:0:0:0:0:1", Some(3000)));
        assert_eq!(v6.to_string(), "http://[::1]:3000");
    }

    #[test]
    fn patterns_are_normalised_like_origins() {
        // A trailing dot and IDNA, as the `http` import sees the request's host.
        let h = p("https://API.example.com.");
        assert_eq!(h.to_string(), "https://api.example.com");
        assert!(h.matches("https", "api.example.com", None));
        let idn = p("https://Bücher.example");
        assert_eq!(idn.host(), "xn--bcher-kva.example");
        assert!(idn.matches("https", "xn--bcher-kva.example", Some(443)));
        assert!(!p("https://api.example.com").matches("https", "\u{430}pi.example.com", None));
        let w = p("https://*.bücher.example");
        assert!(w.matches("https", "a.xn--bcher-kva.example", None));
    }

    #[test]
    fn a_pattern_covers_what_it_allows() {
        assert!(p("https://api.example.com").covers(&p("https://API.example.com:443")));
        assert!(!p("https://api.example.com").covers(&p("https://api.example.com:8443")));
        assert!(!p("https://api.example.com").covers(&p("http://api.example.com")));
        assert!(!p("https://api.example.com").covers(&p("https://*.api.example.com")));
        assert!(p("https://*.example.com").covers(&p("https://api.example.com")));
        assert!(p("https://*.example.com").covers(&p("https://*.a.example.com")));
        assert!(p("https://*.example.com").covers(&p("https://*.example.com")));
        assert!(!p("https://*.example.com").covers(&p("https://example.com")));
        assert!(!p("https://*.example.com").covers(&p("https://badexample.com")));
        assert!(p("http://[::1]:80").covers(&p("http://[0::1]")));
    }

    #[test]
    fn malformed_patterns_say_what_is_expected() {
        let cases = [
            (
                "api.example.com",
                "`api.example.com` has no scheme; expected scheme://host[:port], e.g. `https://api.example.com` or `https://*.example.org:8443`",
            ),
            (
                "ftp://example.com",
                "`ftp://example.com`: scheme `ftp` is not allowed (expected http or https)",
            ),
            (
                "https://example.com/api",
                "`https://example.com/api` has more than an origin (a path, query, user info or whitespace); expected scheme://host[:port], e.g. `https://api.example.com` or `https://*.example.org:8443`",
            ),
            (
                "https://example.com:0",
                "`https://example.com:0`: `0` is not a port (expected a number from 1 to 65535)",
            ),
            (
                "https://example.com:99999",
                "`https://example.com:99999`: `99999` is not a port (expected a number from 1 to 65535)",
            ),
            (
                "https://api.*.example.com",
                "`https://api.*.example.com`: only a leading `*.` wildcard is allowed, e.g. `https://*.example.org`",
            ),
            (
                "https://*.com",
                "`https://*.com` is too broad: a `*.` wildcard must be followed by at least two labels, e.g. `*.example.org`",
            ),
            (
                "https://exa_mple.com",
                "`https://exa_mple.com`: `exa_mple.com` is not a valid host name (expected dot-separated labels of letters, digits and inner hyphens)",
            ),
            (
                "https://-a.com",
                "`https://-a.com`: `-a.com` is not a valid host name (expected dot-separated labels of letters, digits and inner hyphens)",
            ),
            (
                "https://300.1.1.1",
                "`https://300.1.1.1`: `300.1.1.1` is not a valid IPv4 address",
            ),
            (
                "https://*.10.0.0.1",
                "`https://*.10.0.0.1`: a `*.` wildcard needs a host name, not an IP address",
            ),
            (
                "https://[::g]",
                "`https://[::g]`: `::g` is not an IPv6 address",
            ),
            (
                "https://",
                "`https://` has no host; expected scheme://host[:port], e.g. `https://api.example.com` or `https://*.example.org:8443`",
            ),
        ];
        for (pattern, message) in cases {
            assert_eq!(
                HostPattern::parse(pattern).unwrap_err(),
                message,
                "{pattern}"
            );
        }
    }
}
