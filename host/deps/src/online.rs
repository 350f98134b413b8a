//! The OSV API: `POST /v1/querybatch` for the ids affecting each package, then
//! `GET /v1/vulns/{id}` for each distinct id.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use serde_json::{Value, json};

use crate::{Advisory, DepsError, Package};

/// The public OSV API.
pub const OSV_API_BASE: &str = "https://api.osv.dev";

/// At most this many queries per `querybatch` request (the API's limit is 1000).
const BATCH: usize = 1000;
/// Parallel `GET /v1/vulns/{id}` requests.
const PARALLEL: usize = 8;
/// Follow-up pages per package at most.
const MAX_PAGES: usize = 20;

/// Where and how to reach the OSV API.
#[derive(Debug, Clone)]
pub struct OsvClient {
    pub base_url: String,
    pub timeout: Duration,
    pub user_agent: String,
}

impl Default for OsvClient {
    fn default() -> Self {
        OsvClient {
            base_url: OSV_API_BASE.to_string(),
            timeout: Duration::from_secs(30),
            user_agent: concat!("agent-deps/", env!("CARGO_PKG_VERSION")).to_string(),
        }
    }
}

impl OsvClient {
    pub fn new() -> OsvClient {
        OsvClient::default()
    }

    /// Another base URL (a mirror, or a loopback server in tests), without trailing `/v1`.
    pub fn with_base_url(base_url: impl Into<String>) -> OsvClient {
        OsvClient {
            base_url: base_url.into().trim_end_matches('/').to_string(),
            ..OsvClient::default()
        }
    }

    fn http(&self) -> Result<reqwest::Client, DepsError> {
        agent_tls::client_builder()
            .timeout(self.timeout)
            .user_agent(self.user_agent.clone())
            .build()
            .map_err(|e| DepsError::Online(format!("building HTTP client: {e}")))
    }
}

async fn post_json(http: &reqwest::Client, url: &str, body: &Value) -> Result<Value, DepsError> {
    let resp = http
        .post(url)
        .json(body)
        .send()
        .await
        .map_err(|e| DepsError::Online(format!("POST {url}: {e}")))?;
    read_json("POST", url, resp).await
}

async fn get_json(http: &reqwest::Client, url: &str) -> Result<Value, DepsError> {
    let resp = http
        .get(url)
        .send()
        .await
        .map_err(|e| DepsError::Online(format!("GET {url}: {e}")))?;
    read_json("GET", url, resp).await
}

async fn read_json(method: &str, url: &str, resp: reqwest::Response) -> Result<Value, DepsError> {
    let status = resp.status();
    let text = resp
        .text()
        .await
        .map_err(|e| DepsError::Online(format!("{method} {url}: {e}")))?;
    if !status.is_success() {
        let snippet: String = text.chars().take(200).collect();
        return Err(DepsError::Online(format!(
            "{method} {url}: HTTP {status}: {snippet}"
        )));
    }
    let origin = format!("{method} {url}");
    agent_bounded::parse_json(&text, &origin, agent_bounded::Limits::DATA).map_err(|e| match e {
        agent_bounded::Error::Limit(e) => DepsError::Online(e.to_string()),
        agent_bounded::Error::Parse(e) => {
            DepsError::Online(format!("{origin}: invalid JSON response: {e}"))
        }
    })
}

fn query_for(pkg: &Package, page_token: Option<&str>) -> Value {
    let mut q = json!({
        "package": {"name": pkg.name, "ecosystem": pkg.ecosystem.osv_name()},
        "version": pkg.version,
    });
    if let Some(t) = page_token {
        q["page_token"] = json!(t);
    }
    q
}

/// Queries the OSV API for every package with a version (unpinned ones are skipped) and returns
/// `(index into packages, advisory)` pairs, each advisory's `fixed` set to the lowest fixed
/// version above that package's version. Ordered by package index, then advisory id.
pub async fn query_online(
    client: &OsvClient,
    packages: &[Package],
) -> Result<Vec<(usize, Advisory)>, DepsError> {
    let http = client.http()?;
    let batch_url = format!("{}/v1/querybatch", client.base_url);
    let mut hits: Vec<BTreeSet<String>> = vec![BTreeSet::new(); packages.len()];
    // (package index, page token) still to ask.
    let mut pending: Vec<(usize, Option<String>)> = packages
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.version.trim().is_empty())
        .map(|(i, _)| (i, None))
        .collect();
    let mut rounds = 0;
    while !pending.is_empty() {
        rounds += 1;
        if rounds > MAX_PAGES {
            return Err(DepsError::Online(format!(
                "POST {batch_url}: more than {MAX_PAGES} pages of results"
            )));
        }
        let mut next = Vec::new();
        for chunk in pending.chunks(BATCH) {
            let queries: Vec<Value> = chunk
                .iter()
                .map(|(i, tok)| query_for(&packages[*i], tok.as_deref()))
                .collect();
            let resp = post_json(&http, &batch_url, &json!({ "queries": queries })).await?;
            let results = resp
                .get("results")
                .and_then(Value::as_array)
                .ok_or_else(|| {
                    DepsError::Online(format!("POST {batch_url}: response has no `results` array"))
                })?;
            if results.len() != chunk.len() {
                return Err(DepsError::Online(format!(
                    "POST {batch_url}: {} results for {} queries",
                    results.len(),
                    chunk.len()
                )));
            }
            for ((i, _), r) in chunk.iter().zip(results) {
                for v in r
                    .get("vulns")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(id) = v.get("id").and_then(Value::as_str) {
                        hits[*i].insert(id.to_string());
                    }
                }
                if let Some(tok) = r.get("next_page_token").and_then(Value::as_str)
                    && !tok.is_empty()
                {
                    next.push((*i, Some(tok.to_string())));
                }
            }
        }
        pending = next;
    }
    // Fetch each distinct id once.
    let ids: BTreeSet<String> = hits.iter().flatten().cloned().collect();
    let mut records: HashMap<String, Advisory> = HashMap::new();
    let ids: Vec<String> = ids.into_iter().collect();
    for group in ids.chunks(PARALLEL) {
        let mut set = tokio::task::JoinSet::new();
        for id in group {
            let http = http.clone();
            let url = format!("{}/v1/vulns/{}", client.base_url, id);
            let id = id.clone();
            set.spawn(async move {
                let v = get_json(&http, &url).await?;
                let adv = Advisory::from_value(&url, &v)?;
                Ok::<_, DepsError>((id, adv))
            });
        }
        while let Some(res) = set.join_next().await {
            let (id, adv) = res.map_err(|e| DepsError::Online(format!("task failed: {e}")))??;
            records.insert(id, adv);
        }
    }
    let mut out = Vec::new();
    for (i, ids) in hits.iter().enumerate() {
        for id in ids {
            if let Some(adv) = records.get(id) {
                let mut adv = adv.clone();
                adv.fixed = adv.fixed_for(&packages[i]);
                out.push((i, adv));
            }
        }
    }
    Ok(out)
}

/// [`query_online`] for synchronous callers: runs on a fresh thread with its own runtime, so it
/// is safe to call inside or outside a tokio runtime.
pub fn query_online_blocking(
    client: &OsvClient,
    packages: &[Package],
) -> Result<Vec<(usize, Advisory)>, DepsError> {
    std::thread::scope(|s| {
        s.spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| DepsError::Online(format!("starting runtime: {e}")))?;
            rt.block_on(query_online(client, packages))
        })
        .join()
        .unwrap_or_else(|_| Err(DepsError::Online("query thread panicked".into())))
    })
}
