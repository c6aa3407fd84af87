//! A scripted model server for the real reviewer CLIs (issue 11): loopback only, started by the
//! test, stopped when the test drops it (and by itself after [`MAX_LIFETIME`]).
//!
//! It speaks just enough of two streaming APIs for a review:
//! - `POST /v1/messages` — the Anthropic Messages API as Claude Code calls it
//!   (`ANTHROPIC_BASE_URL`); SSE `message_start`, `content_block_start/delta/stop` for text and
//!   `tool_use` blocks (the `StructuredOutput` tool of `--json-schema` is an ordinary tool_use),
//!   `message_delta` with the stop reason, `message_stop`.
//! - `POST /v1/responses` — the OpenAI Responses API as Codex calls it (a model provider whose
//!   `base_url` is this server + `/v1`, `wire_api = "responses"`); SSE `response.created`,
//!   `response.output_item.added/done` for `message`, `function_call` (`exec_command`) and
//!   `custom_tool_call` (`apply_patch`) items, `response.completed` with usage.
//!
//! A test scripts the turns of each endpoint as a queue ([`Script`]): every request to an
//! endpoint takes the next [`Turn`] — an answer, an HTTP error with headers and a JSON body, or a
//! stalled stream (headers, then nothing). A queue that runs dry answers 400 with
//! `model server: script exhausted` (neither CLI retries a 400), so a test that scripted too few
//! turns fails visibly. Every request is logged with its headers and body ([`Request`]), so a
//! test can assert what the CLI sent back — e.g. the tool results that prove it read a file.
//! Other paths: `HEAD` anything → 200, `GET /v1/models` → an empty list, the rest → 404.
//!
//! The event shapes follow what worked against Claude Code 2.1.332 and Codex 0.171.0
//! (`shared/research/real-cli-runs.md`). Ids are deterministic per server (`msg_srv_1`,
//! `toolu_srv_2`, `call_srv_3`, …) so recordings differ between runs only where the CLIs
//! themselves add volatile values.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

/// The server stops accepting after this long even if the test never drops it.
pub const MAX_LIFETIME: Duration = Duration::from_secs(600);

/// One content block of an Anthropic assistant message.
#[derive(Clone, Debug)]
pub enum Block {
    Text(String),
    ToolUse { name: String, input: Value },
}

/// One output item of an OpenAI Responses answer.
#[derive(Clone, Debug)]
pub enum Item {
    /// An assistant message with one `output_text` part (Codex's final message).
    Message(String),
    /// A function call; `arguments` is sent as its compact JSON text.
    FunctionCall { name: String, arguments: Value },
    /// A freeform (custom) tool call, e.g. `apply_patch`.
    CustomToolCall { name: String, input: String },
    /// A function call to a tool of a namespace (Codex declares each MCP server's tools as a
    /// `namespace` tool, `mcp__<server>`; the call names both).
    NamespacedCall {
        namespace: String,
        name: String,
        arguments: Value,
    },
}

#[derive(Clone, Debug)]
enum Answer {
    Claude(Vec<Block>),
    Codex(Vec<Item>),
    Error {
        status: u16,
        headers: Vec<(String, String)>,
        body: Value,
    },
    Stall,
}

/// What the server answers to one request.
#[derive(Clone, Debug)]
pub struct Turn {
    answer: Answer,
    model: Option<String>,
    forever: bool,
}

impl Turn {
    /// An Anthropic assistant message with these blocks; the stop reason is `tool_use` when a
    /// block is a tool use, else `end_turn`.
    pub fn claude(blocks: Vec<Block>) -> Turn {
        Turn::new(Answer::Claude(blocks))
    }
    /// A Responses answer with these output items.
    pub fn codex(items: Vec<Item>) -> Turn {
        Turn::new(Answer::Codex(items))
    }
    /// An HTTP error: `status` with this JSON body (add headers with [`Turn::header`]).
    pub fn error(status: u16, body: Value) -> Turn {
        Turn::new(Answer::Error {
            status,
            headers: Vec::new(),
            body,
        })
    }
    /// HTTP 200 with the SSE headers, then nothing until the client or the server goes away.
    pub fn stall() -> Turn {
        Turn::new(Answer::Stall)
    }
    fn new(answer: Answer) -> Turn {
        Turn {
            answer,
            model: None,
            forever: false,
        }
    }
    /// The model the answer claims to come from (default: the request's `model`).
    pub fn served_as(mut self, model: &str) -> Turn {
        self.model = Some(model.to_string());
        self
    }
    /// An extra response header (errors only; answers carry their own).
    pub fn header(mut self, name: &str, value: &str) -> Turn {
        if let Answer::Error { headers, .. } = &mut self.answer {
            headers.push((name.to_string(), value.to_string()));
        }
        self
    }
    /// This turn answers every further request too (it is never taken off the queue).
    pub fn forever(mut self) -> Turn {
        self.forever = true;
        self
    }
}

pub fn text(t: &str) -> Block {
    Block::Text(t.to_string())
}
pub fn tool_use(name: &str, input: Value) -> Block {
    Block::ToolUse {
        name: name.to_string(),
        input,
    }
}
pub fn message(t: &str) -> Item {
    Item::Message(t.to_string())
}
pub fn function_call(name: &str, arguments: Value) -> Item {
    Item::FunctionCall {
        name: name.to_string(),
        arguments,
    }
}
pub fn namespaced_call(namespace: &str, name: &str, arguments: Value) -> Item {
    Item::NamespacedCall {
        namespace: namespace.to_string(),
        name: name.to_string(),
        arguments,
    }
}
pub fn custom_tool_call(name: &str, input: &str) -> Item {
    Item::CustomToolCall {
        name: name.to_string(),
        input: input.to_string(),
    }
}

/// The turns of both endpoints, in the order the requests will take them.
#[derive(Default)]
pub struct Script {
    messages: VecDeque<Turn>,
    responses: VecDeque<Turn>,
}

impl Script {
    pub fn new() -> Script {
        Script::default()
    }
    /// Turns for `POST /v1/messages` (Claude Code).
    pub fn messages(mut self, turns: impl IntoIterator<Item = Turn>) -> Script {
        self.messages.extend(turns);
        self
    }
    /// Turns for `POST /v1/responses` (Codex).
    pub fn responses(mut self, turns: impl IntoIterator<Item = Turn>) -> Script {
        self.responses.extend(turns);
        self
    }
}

/// One request as the server received it, and what it answered.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    /// The request target as sent, query included (`/v1/messages?beta=true`).
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// Time since the server started.
    pub at: Duration,
    /// A short description of the answer (`claude message`, `error 429`, `stall`, …).
    pub answer: String,
}

impl Request {
    /// The path without the query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }
    /// The body as JSON (`null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
    /// A header's value, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

struct State {
    script: Script,
    log: Vec<Request>,
    connections: Vec<TcpStream>,
}

struct Shared {
    state: Mutex<State>,
    stop: AtomicBool,
    ids: AtomicU64,
    started: Instant,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking connection thread must not hide the log from the test.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn id(&self, prefix: &str) -> String {
        format!(
            "{prefix}_srv_{}",
            self.ids.fetch_add(1, Ordering::Relaxed) + 1
        )
    }
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.started.elapsed() > MAX_LIFETIME
    }
}

/// The running server; dropping it stops it and closes every open connection.
pub struct ModelServer {
    port: u16,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl ModelServer {
    pub fn start(script: Script) -> ModelServer {
        let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind 127.0.0.1:0");
        let port = listener.local_addr().expect("local address").port();
        listener
            .set_nonblocking(true)
            .expect("nonblocking listener");
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                script,
                log: Vec::new(),
                connections: Vec::new(),
            }),
            stop: AtomicBool::new(false),
            ids: AtomicU64::new(0),
            started: Instant::now(),
        });
        let s = Arc::clone(&shared);
        let acceptor = std::thread::spawn(move || accept_loop(listener, s));
        ModelServer {
            port,
            shared,
            acceptor: Some(acceptor),
        }
    }

    /// `http://127.0.0.1:PORT` (Claude's `ANTHROPIC_BASE_URL`; Codex's `base_url` adds `/v1`).
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.shared.lock().log.clone()
    }

    /// The requests whose path (query stripped) is `path`.
    pub fn requests_to(&self, path: &str) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|r| r.path() == path)
            .collect()
    }

    /// How long ago the last request arrived (`None` before the first).
    pub fn since_last_request(&self) -> Option<Duration> {
        let last = self.shared.lock().log.last().map(|r| r.at)?;
        Some(self.shared.started.elapsed().saturating_sub(last))
    }

    /// Turns not yet taken, per endpoint (`forever` turns count once).
    pub fn unused_turns(&self) -> (usize, usize) {
        let st = self.shared.lock();
        (st.script.messages.len(), st.script.responses.len())
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        for c in self.shared.lock().connections.drain(..) {
            let _ = c.shutdown(Shutdown::Both);
        }
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    while !shared.stopped() {
        match listener.accept() {
            Ok((stream, _)) => {
                if stream.set_nonblocking(false).is_err() {
                    continue;
                }
                if let Ok(clone) = stream.try_clone() {
                    shared.lock().connections.push(clone);
                }
                let s = Arc::clone(&shared);
                std::thread::spawn(move || serve_connection(stream, s));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

/// Serves requests on one keep-alive connection until the client closes it or the server stops,
/// then closes the socket (the server's own clone of it would keep it open otherwise).
fn serve_connection(stream: TcpStream, shared: Arc<Shared>) {
    let closer = stream.try_clone();
    serve(stream, &shared);
    if let Ok(c) = closer {
        let _ = c.shutdown(Shutdown::Both);
    }
}

fn serve(stream: TcpStream, shared: &Shared) {
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut out = stream;
    while !shared.stopped() {
        let Some(mut req) = read_request(&mut reader, shared.started) else {
            return;
        };
        let keep_alive = !req
            .header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"));
        let reply = route(&req, shared);
        req.answer = reply.describe();
        shared.lock().log.push(req);
        match reply {
            Reply::Plain {
                status,
                headers,
                body,
            } => {
                if write_plain(&mut out, status, &headers, &body).is_err() {
                    return;
                }
            }
            Reply::Sse { headers, events } => {
                if write_sse(&mut out, &headers, &events).is_err() {
                    return;
                }
            }
            Reply::Stall => {
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                            cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n";
                if out
                    .write_all(head.as_bytes())
                    .and_then(|_| out.flush())
                    .is_ok()
                {
                    while !shared.stopped() {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
                return;
            }
        }
        if !keep_alive {
            return;
        }
    }
}

enum Reply {
    Plain {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    Sse {
        headers: Vec<(String, String)>,
        events: Vec<(String, Value)>,
    },
    Stall,
}

impl Reply {
    fn describe(&self) -> String {
        match self {
            Reply::Plain { status, .. } => format!("status {status}"),
            Reply::Sse { events, .. } => format!("stream of {} events", events.len()),
            Reply::Stall => "stall".to_string(),
        }
    }
}

fn route(req: &Request, shared: &Shared) -> Reply {
    let path = req.path();
    if req.method == "HEAD" {
        return plain(200, "");
    }
    let endpoint_is_messages = path == "/v1/messages";
    if req.method == "POST" && (endpoint_is_messages || path == "/v1/responses") {
        let turn = {
            let mut st = shared.lock();
            let queue = if endpoint_is_messages {
                &mut st.script.messages
            } else {
                &mut st.script.responses
            };
            match queue.front() {
                Some(t) if t.forever => Some(t.clone()),
                Some(_) => queue.pop_front(),
                None => None,
            }
        };
        let Some(turn) = turn else {
            let body = if endpoint_is_messages {
                json!({"type": "error", "error": {"type": "invalid_request_error",
                    "message": "model server: script exhausted"}})
            } else {
                json!({"error": {"type": "invalid_request_error", "code": null, "param": null,
                    "message": "model server: script exhausted"}})
            };
            return plain(400, &body.to_string());
        };
        let model = turn.model.clone().unwrap_or_else(|| {
            req.json()["model"]
                .as_str()
                .unwrap_or("unknown-model")
                .to_string()
        });
        let input_tokens = (req.body.len() / 4).max(1);
        return match turn.answer {
            Answer::Claude(blocks) => anthropic_stream(&blocks, &model, input_tokens, shared),
            Answer::Codex(items) => responses_stream(&items, &model, input_tokens, shared),
            Answer::Error {
                status,
                headers,
                body,
            } => {
                let mut headers = headers;
                headers.push(("content-type".into(), "application/json".into()));
                headers.push(("request-id".into(), shared.id("req")));
                headers.push(("x-request-id".into(), shared.id("req")));
                Reply::Plain {
                    status,
                    headers,
                    body: body.to_string(),
                }
            }
            Answer::Stall => Reply::Stall,
        };
    }
    if req.method == "GET" && path == "/v1/models" {
        return Reply::Plain {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: json!({"object": "list", "data": [], "models": []}).to_string(),
        };
    }
    Reply::Plain {
        status: 404,
        headers: vec![("content-type".into(), "application/json".into())],
        body: json!({"type": "error", "error": {"type": "not_found_error",
            "message": format!("model server: no route for {} {}", req.method, path)}})
        .to_string(),
    }
}

fn plain(status: u16, body: &str) -> Reply {
    Reply::Plain {
        status,
        headers: Vec::new(),
        body: body.to_string(),
    }
}

/// Splits `s` in two pieces at a character boundary, so the client has to join deltas.
fn halves(s: &str) -> Vec<String> {
    let mut mid = s.len() / 2;
    while !s.is_char_boundary(mid) {
        mid -= 1;
    }
    [&s[..mid], &s[mid..]]
        .into_iter()
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

fn anthropic_stream(blocks: &[Block], model: &str, input_tokens: usize, shared: &Shared) -> Reply {
    let usage = json!({"input_tokens": input_tokens, "output_tokens": 1,
        "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
    let mut events = vec![(
        "message_start".to_string(),
        json!({"type": "message_start", "message": {
            "id": shared.id("msg"), "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage}}),
    )];
    let mut output_chars = 0;
    let mut stop_reason = "end_turn";
    for (index, block) in blocks.iter().enumerate() {
        match block {
            Block::Text(t) => {
                output_chars += t.len();
                events.push((
                    "content_block_start".into(),
                    json!({"type": "content_block_start", "index": index,
                        "content_block": {"type": "text", "text": ""}}),
                ));
                for piece in halves(t) {
                    events.push((
                        "content_block_delta".into(),
                        json!({"type": "content_block_delta", "index": index,
                            "delta": {"type": "text_delta", "text": piece}}),
                    ));
                }
            }
            Block::ToolUse { name, input } => {
                stop_reason = "tool_use";
                let input = input.to_string();
                output_chars += input.len();
                events.push((
                    "content_block_start".into(),
                    json!({"type": "content_block_start", "index": index,
                        "content_block": {"type": "tool_use", "id": shared.id("toolu"),
                            "name": name, "input": {}}}),
                ));
                for piece in halves(&input) {
                    events.push((
                        "content_block_delta".into(),
                        json!({"type": "content_block_delta", "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": piece}}),
                    ));
                }
            }
        }
        events.push((
            "content_block_stop".into(),
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push((
        "message_delta".into(),
        json!({"type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": output_chars / 4 + 1}}),
    ));
    events.push(("message_stop".into(), json!({"type": "message_stop"})));
    Reply::Sse {
        headers: vec![("request-id".into(), shared.id("req"))],
        events,
    }
}

fn responses_stream(items: &[Item], model: &str, input_tokens: usize, shared: &Shared) -> Reply {
    let id = shared.id("resp");
    let created_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let response = |status: &str, output: Value| {
        json!({"id": id, "object": "response", "created_at": created_at, "status": status,
            "model": model, "output": output})
    };
    let mut events = vec![(
        "response.created".to_string(),
        json!({"type": "response.created", "response": response("in_progress", json!([]))}),
    )];
    let mut done = Vec::new();
    let mut output_chars = 0;
    for (output_index, item) in items.iter().enumerate() {
        let completed = match item {
            Item::Message(t) => {
                output_chars += t.len();
                let item_id = shared.id("msg");
                let added = json!({"type": "message", "id": item_id, "status": "in_progress",
                    "role": "assistant", "content": []});
                let completed = json!({"type": "message", "id": item_id, "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": t, "annotations": []}]});
                events.push(added_event(output_index, added));
                for piece in halves(t) {
                    events.push((
                        "response.output_text.delta".into(),
                        json!({"type": "response.output_text.delta", "item_id": item_id,
                            "output_index": output_index, "content_index": 0, "delta": piece}),
                    ));
                }
                completed
            }
            Item::FunctionCall { name, arguments } => {
                let arguments = arguments.to_string();
                output_chars += arguments.len();
                let (item_id, call_id) = (shared.id("fc"), shared.id("call"));
                let added = json!({"type": "function_call", "id": item_id, "status": "in_progress",
                    "call_id": call_id, "name": name, "arguments": ""});
                let completed = json!({"type": "function_call", "id": item_id,
                    "status": "completed", "call_id": call_id, "name": name,
                    "arguments": arguments});
                events.push(added_event(output_index, added));
                completed
            }
            Item::NamespacedCall {
                namespace,
                name,
                arguments,
            } => {
                let arguments = arguments.to_string();
                output_chars += arguments.len();
                let (item_id, call_id) = (shared.id("fc"), shared.id("call"));
                let added = json!({"type": "function_call", "id": item_id, "status": "in_progress",
                    "call_id": call_id, "namespace": namespace, "name": name, "arguments": ""});
                let completed = json!({"type": "function_call", "id": item_id,
                    "status": "completed", "call_id": call_id, "namespace": namespace,
                    "name": name, "arguments": arguments});
                events.push(added_event(output_index, added));
                completed
            }
            Item::CustomToolCall { name, input } => {
                output_chars += input.len();
                let (item_id, call_id) = (shared.id("ctc"), shared.id("call"));
                let added = json!({"type": "custom_tool_call", "id": item_id,
                    "status": "in_progress", "call_id": call_id, "name": name, "input": ""});
                let completed = json!({"type": "custom_tool_call", "id": item_id,
                    "status": "completed", "call_id": call_id, "name": name, "input": input});
                events.push(added_event(output_index, added));
                completed
            }
        };
        events.push((
            "response.output_item.done".into(),
            json!({"type": "response.output_item.done", "output_index": output_index,
                "item": completed}),
        ));
        done.push(completed);
    }
    let output_tokens = output_chars / 4 + 1;
    let mut completed = response("completed", Value::Array(done));
    completed["usage"] = json!({"input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0}, "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output_tokens});
    events.push((
        "response.completed".into(),
        json!({"type": "response.completed", "response": completed}),
    ));
    for (n, (_, data)) in events.iter_mut().enumerate() {
        data["sequence_number"] = json!(n);
    }
    Reply::Sse {
        headers: vec![("x-request-id".into(), shared.id("req"))],
        events,
    }
}

fn added_event(output_index: usize, item: Value) -> (String, Value) {
    (
        "response.output_item.added".into(),
        json!({"type": "response.output_item.added", "output_index": output_index, "item": item}),
    )
}

/// Reads one HTTP/1.1 request (Content-Length or chunked body); `None` at EOF or on garbage.
fn read_request(reader: &mut BufReader<TcpStream>, started: Instant) -> Option<Request> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let target = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let mut body = Vec::new();
    if get("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).ok()?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(len) = get("content-length") {
        let len: usize = len.parse().ok()?;
        body.resize(len, 0);
        reader.read_exact(&mut body).ok()?;
    }
    Some(Request {
        method,
        target,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
        at: started.elapsed(),
        answer: String::new(),
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        529 => "Overloaded",
        _ => "Status",
    }
}

fn write_plain(
    out: &mut TcpStream,
    status: u16,
    headers: &[(String, String)],
    body: &str,
) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    out.write_all(head.as_bytes())?;
    out.write_all(body.as_bytes())?;
    out.flush()
}

/// Writes the SSE answer with chunked encoding, one chunk per event.
fn write_sse(
    out: &mut TcpStream,
    headers: &[(String, String)],
    events: &[(String, Value)],
) -> std::io::Result<()> {
    let mut head = String::from(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
         transfer-encoding: chunked\r\n",
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    out.write_all(head.as_bytes())?;
    for (event, data) in events {
        let chunk = format!("event: {event}\ndata: {data}\n\n");
        out.write_all(format!("{:x}\r\n{chunk}\r\n", chunk.len()).as_bytes())?;
    }
    out.write_all(b"0\r\n\r\n")?;
    out.flush()
}

/// The server on its own (no CLI needed): both streams, an error, a dry queue, other paths.
#[test]
fn model_server_answers_as_scripted() {
    let server = ModelServer::start(
        Script::new()
            .messages([Turn::claude(vec![
                text("hi"),
                tool_use("Read", json!({"file_path": "a"})),
            ])])
            .responses([
                Turn::codex(vec![function_call("exec_command", json!({"cmd": "ls"}))]),
                Turn::error(429, json!({"error": {"code": "insufficient_quota"}}))
                    .header("retry-after", "1"),
            ]),
    );
    let ask = |method: &str, path: &str, body: &str| {
        let mut s = TcpStream::connect(("127.0.0.1", server.port())).unwrap();
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\
             content-length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    };
    let claude = ask(
        "POST",
        "/v1/messages?beta=true",
        r#"{"model":"m1","stream":true}"#,
    );
    assert!(claude.starts_with("HTTP/1.1 200 OK\r\n"), "{claude}");
    assert!(claude.contains("event: message_start\ndata: {\"type\":\"message_start\""));
    assert!(claude.contains(r#""model":"m1""#), "{claude}");
    assert!(claude.contains(r#""partial_json":"{\"file_"#), "{claude}");
    assert!(claude.contains(r#""stop_reason":"tool_use""#), "{claude}");
    assert!(
        claude.ends_with("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n\r\n0\r\n\r\n")
    );
    let dry = ask("POST", "/v1/messages", "{}");
    assert!(dry.starts_with("HTTP/1.1 400 "), "{dry}");
    assert!(dry.contains("script exhausted"), "{dry}");

    let codex = ask("POST", "/v1/responses", r#"{"model":"g1"}"#);
    assert!(
        codex.contains("event: response.output_item.done"),
        "{codex}"
    );
    assert!(
        codex.contains(r#""arguments":"{\"cmd\":\"ls\"}""#),
        "{codex}"
    );
    assert!(codex.contains(r#""type":"response.completed""#), "{codex}");
    let refused = ask("POST", "/v1/responses", "{}");
    assert!(
        refused.starts_with("HTTP/1.1 429 Too Many Requests\r\n"),
        "{refused}"
    );
    assert!(refused.contains("retry-after: 1\r\n"), "{refused}");
    assert!(
        refused.ends_with(r#"{"error":{"code":"insufficient_quota"}}"#),
        "{refused}"
    );

    assert!(ask("GET", "/v1/models", "").contains(r#""data":[]"#));
    assert!(ask("GET", "/elsewhere", "").starts_with("HTTP/1.1 404 "));
    assert!(ask("HEAD", "/", "").starts_with("HTTP/1.1 200 "));
    let log = server.requests();
    assert_eq!(log.len(), 7);
    assert_eq!(log[0].path(), "/v1/messages");
    assert_eq!(log[0].json()["model"], "m1");
    assert_eq!(log[0].header("Host"), Some("x"));
    assert_eq!(server.requests_to("/v1/responses").len(), 2);
    assert_eq!(server.unused_turns(), (0, 0));
}

#[test]
fn model_server_stalls_after_the_headers() {
    let server = ModelServer::start(Script::new().messages([Turn::stall()]));
    let mut s = TcpStream::connect(("127.0.0.1", server.port())).unwrap();
    s.write_all(b"POST /v1/messages HTTP/1.1\r\ncontent-length: 2\r\n\r\n{}")
        .unwrap();
    s.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut buf = [0u8; 512];
    let n = s.read(&mut buf).unwrap();
    let head = String::from_utf8_lossy(&buf[..n]).into_owned();
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(head.ends_with("\r\n\r\n"), "{head}");
    assert!(s.read(&mut buf).is_err(), "more than the headers");
    assert!(server.since_last_request().unwrap() >= Duration::from_millis(300));
    drop(server);
    // Dropping the server closes the stalled connection.
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(s.read(&mut buf).unwrap(), 0);
}
