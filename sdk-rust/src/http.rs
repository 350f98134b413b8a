//! HTTP requests through the host (permission `net:fetch`).
//!
//! Only URLs whose scheme, host and port match the manifest's `hosts:` list
//! are allowed; redirects are followed only to allowed hosts. Any status is
//! a response; only transport failures are errors.

use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::host::http as imp;
use crate::{Error, ErrorKind};

/// Sends a `GET` request to `url`.
///
/// # Errors
///
/// [`Error`] when `net:fetch` is not granted, the host is not in the
/// manifest's `hosts:` list, the URL is invalid, or the transport fails.
///
/// # Example
///
/// ```no_run
/// # fn main() -> Result<(), agent_skill_sdk::Error> {
/// let resp = agent_skill_sdk::http::get("https://example.com/api/status")?;
/// if resp.is_success() {
///     agent_skill_sdk::log::info(resp.text());
/// }
/// # Ok(()) }
/// ```
pub fn get(url: &str) -> Result<Response, Error> {
    Request::get(url).send()
}

/// Sends `request`.
///
/// # Errors
///
/// As [`get`].
pub fn fetch(request: &Request) -> Result<Response, Error> {
    request.send()
}

/// An HTTP request. Defaults: no headers, no body, the host's time limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    method: String,
    url: String,
    headers: Vec<(String, String)>,
    body: Option<Vec<u8>>,
    timeout_ms: Option<u32>,
}

impl Request {
    /// A request with `method` (`GET`, `POST`, `PUT`, `PATCH`, `DELETE` or
    /// `HEAD`) to the absolute `http`/`https` `url`.
    pub fn new(method: impl Into<String>, url: impl Into<String>) -> Self {
        Request {
            method: method.into(),
            url: url.into(),
            headers: Vec::new(),
            body: None,
            timeout_ms: None,
        }
    }

    /// A `GET` request.
    pub fn get(url: impl Into<String>) -> Self {
        Request::new("GET", url)
    }

    /// A `POST` request.
    pub fn post(url: impl Into<String>) -> Self {
        Request::new("POST", url)
    }

    /// Adds a header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets the body.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// Sets a JSON body and the `content-type: application/json` header.
    ///
    /// # Errors
    ///
    /// When `value` cannot be serialized (a map with non-string keys...).
    pub fn json<T: Serialize + ?Sized>(self, value: &T) -> Result<Self, serde_json::Error> {
        let body = serde_json::to_vec(value)?;
        Ok(self.header("content-type", "application/json").body(body))
    }

    /// A time limit (the host caps it at its own maximum); limits above
    /// `u32::MAX` milliseconds saturate.
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout_ms = Some(u32::try_from(limit.as_millis()).unwrap_or(u32::MAX));
        self
    }

    /// Sends the request and reads the whole response.
    ///
    /// # Errors
    ///
    /// As [`get`].
    pub fn send(&self) -> Result<Response, Error> {
        let request = imp::HttpRequest {
            method: self.method.clone(),
            url: self.url.clone(),
            headers: self.headers.clone(),
            body: self.body.clone(),
            timeout_ms: self.timeout_ms,
        };
        imp::fetch(&request)
            .map(|r| Response {
                status: r.status,
                headers: r.headers,
                body: r.body,
            })
            .map_err(|e| Error::from_wit("http", e))
    }
}

/// An HTTP response (any status).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The headers, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body, cut at the host's size cap.
    pub body: Vec<u8>,
}

impl Response {
    /// Whether the status is 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body decoded from JSON.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Decode`] when the body is not JSON of the shape of `T`.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, Error> {
        serde_json::from_slice(&self.body).map_err(|e| {
            Error::new(
                "http",
                ErrorKind::Decode(format!("response body (status {}): {e}", self.status)),
            )
        })
    }
}
