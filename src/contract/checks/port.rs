//! `process_listening` (a check) and `port_open` (a prerequisite): something accepts a TCP
//! connection on the port.

use super::*;

pub(super) fn tcp_listening(spec: &PortSpec) -> Outcome {
    let host = spec.host.as_deref().unwrap_or("localhost");
    let port = spec.port;
    let no_address = json!({"host": host, "port": port, "address": null});
    let addrs: Vec<SocketAddr> = match (host, port).to_socket_addrs() {
        Ok(a) => a.collect(),
        Err(e) => return Outcome::fail(format!("cannot resolve {host:?}: {e}"), no_address),
    };
    if addrs.is_empty() {
        return Outcome::fail(format!("{host:?} resolves to no address"), no_address);
    }
    let mut refusals = Vec::new();
    for addr in &addrs {
        match TcpStream::connect_timeout(addr, CONNECT_TIMEOUT) {
            Ok(_) => {
                return Outcome::pass(
                    format!("{addr} accepts connections"),
                    json!({"host": host, "port": port, "address": addr.to_string()}),
                )
            }
            Err(e) => refusals.push(format!("{addr}: {e}")),
        }
    }
    Outcome::fail(
        format!("nothing listens on {host}:{port} ({})", refusals.join("; ")),
        no_address,
    )
}
