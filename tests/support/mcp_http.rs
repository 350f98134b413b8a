//! A streamable-HTTP MCP server built with `rmcp` (its server side), on 127.0.0.1, for the
//! CLI tests of the MCP client (tests/cli/mcp.rs). One tool, `add {a, b}`; every request
//! must carry the header `x-token` with the value given to [`McpHttpServer::start`]
//! (the client takes it from a named environment variable), else it is answered 401.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};

#[derive(Clone)]
struct Adder {
    calls: Arc<AtomicUsize>,
}

impl ServerHandler for Adder {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(serde_json::from_value(serde_json::json!({ "tools": [{
            "name": "add",
            "description": "Adds two integers",
            "inputSchema": {
                "type": "object",
                "properties": { "a": {"type": "integer"}, "b": {"type": "integer"} },
                "required": ["a", "b"]
            }
        }]}))
        .expect("tools"))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let args = request.arguments.unwrap_or_default();
        let n = |k: &str| args.get(k).and_then(serde_json::Value::as_i64).unwrap_or(0);
        let sum = n("a") + n("b");
        let result = serde_json::from_value(serde_json::json!({
            "content": [{ "type": "text", "text": format!("sum = {sum}") }]
        }))
        .expect("result");
        Ok(CallToolResponse::Complete(result))
    }
}

/// A running server; stopped when dropped (its runtime thread ends).
pub struct McpHttpServer {
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// The origin, `http://127.0.0.1:PORT`.
    pub origin: String,
    calls: Arc<AtomicUsize>,
    _runtime: tokio::runtime::Runtime,
}

impl McpHttpServer {
    /// Starts the server on a free port of 127.0.0.1, requiring `token` in `x-token`.
    pub fn start(token: &str) -> McpHttpServer {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let calls = Arc::new(AtomicUsize::new(0));
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind");
        let addr: SocketAddr = listener.local_addr().expect("addr");
        let handler = Adder {
            calls: calls.clone(),
        };
        let service = StreamableHttpService::new(
            move || Ok(handler.clone()),
            Arc::new(LocalSessionManager::default()),
            StreamableHttpServerConfig::default(),
        );
        let token = token.to_string();
        runtime.spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let service = service.clone();
                let token = token.clone();
                tokio::spawn(async move {
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let svc = hyper::service::service_fn(
                        move |req: hyper::Request<hyper::body::Incoming>| {
                            let service = service.clone();
                            let ok = req
                                .headers()
                                .get("x-token")
                                .is_some_and(|v| v.as_bytes() == token.as_bytes());
                            async move {
                                if !ok {
                                    let body =
                                        http_body_util::BodyExt::boxed(http_body_util::Full::new(
                                            bytes::Bytes::from("missing or wrong x-token"),
                                        ));
                                    let resp = hyper::Response::builder()
                                        .status(401)
                                        .body(body)
                                        .expect("response");
                                    return Ok::<_, std::convert::Infallible>(resp);
                                }
                                Ok(service.handle(req).await)
                            }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, svc)
                        .await;
                });
            }
        });
        McpHttpServer {
            url: format!("http://{addr}/mcp"),
            origin: format!("http://{addr}"),
            calls,
            _runtime: runtime,
        }
    }

    /// How many tool calls it has answered.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}
