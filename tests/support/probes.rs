//! Destinations that a hostile build step tries to reach, set up by the test on this
//! machine: a TCP server on every address of the host (reached as the host's own
//! address and as the Docker bridge's), a TCP server in a network namespace the test
//! makes (a veth pair with addresses of its own), and the link-local metadata
//! address (nothing listens there: the probe must not even get a route). Each server
//! counts the connections it accepts; a test asserts that none arrived.
//!
//! The probe programs (Python, Node, Rust) try each destination three ways: a direct
//! TCP connection, a tunnel through the build's proxy (`CONNECT`), and a plain request
//! through it; they catch every error, so the build goes on and its real
//! dependencies install.

use std::net::{Ipv4Addr, TcpListener};
use std::process::{Child, Command};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The link-local address of cloud machines' metadata service.
pub const METADATA: &str = "169.254.169.254";

/// The servers of one test and the destinations they make.
pub struct Probes {
    accepted: Arc<AtomicUsize>,
    port: u16,
    host_address: String,
    bridge_address: String,
    namespace: Namespace,
}

impl Probes {
    /// Starts the servers; `None` (the test to skip, said on stderr) when this machine
    /// cannot make a network namespace (not root, no `ip`).
    pub fn start() -> Option<Probes> {
        let listener = TcpListener::bind((Ipv4Addr::UNSPECIFIED, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                counter.fetch_add(1, Ordering::SeqCst);
                drop(stream);
            }
        });
        let host_address = address_of_default_route()?;
        let bridge_address = address_of("docker0")?;
        let namespace = Namespace::make()?;
        Some(Probes { accepted, port, host_address, bridge_address, namespace })
    }

    /// Every destination as `(address, port)`.
    pub fn targets(&self) -> Vec<(String, u16)> {
        vec![
            (self.host_address.clone(), self.port),
            (self.bridge_address.clone(), self.port),
            (self.namespace.server_address.clone(), self.namespace.port),
            (METADATA.to_string(), 80),
        ]
    }

    /// Connections the servers accepted (the host's and the namespace's).
    pub fn connections(&self) -> usize {
        self.accepted.load(Ordering::SeqCst) + self.namespace.connections()
    }

    /// The targets as a list of pairs, in Python's and Rust's syntax alike:
    /// `[("10.0.0.2", 80), ...]`.
    pub fn targets_literal(&self) -> String {
        let items: Vec<String> = self.targets().iter().map(|(host, port)| format!("(\"{host}\", {port})")).collect();
        format!("[{}]", items.join(", "))
    }
}

/// The source address of this machine's default route.
fn address_of_default_route() -> Option<String> {
    let output = Command::new("ip").args(["-4", "route", "get", "192.0.2.123"]).output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let mut words = text.split_whitespace();
    words.find(|word| *word == "src").and_then(|_| words.next()).map(str::to_string).or_else(|| {
        eprintln!("skipped: this machine has no IPv4 default route");
        None
    })
}

/// The IPv4 address of an interface.
fn address_of(interface: &str) -> Option<String> {
    let output = Command::new("ip").args(["-4", "-o", "addr", "show", "dev", interface]).output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let address = text.split_whitespace().skip_while(|word| *word != "inet").nth(1)?;
    Some(address.split('/').next()?.to_string())
}

/// A network namespace of the test's, joined to the host by a veth pair, with a TCP
/// server that counts its connections into a file.
struct Namespace {
    name: String,
    host_link: String,
    server_address: String,
    port: u16,
    server: Child,
    count_file: tempfile::NamedTempFile,
}

impl Namespace {
    fn make() -> Option<Namespace> {
        let id = std::process::id() % 60000 + rand_suffix();
        let name = format!("swh-probe-{id}");
        let host_link = format!("swhp{id}h");
        let inner_link = format!("swhp{id}n");
        // A /30 of 10.213.0.0/16 that depends on the id: tests in parallel differ.
        let block = (id % 16000) * 4;
        let (third, fourth) = (block / 256, block % 256);
        let host_address = format!("10.213.{third}.{}", fourth + 1);
        let server_address = format!("10.213.{third}.{}", fourth + 2);
        let steps: Vec<Vec<String>> = vec![
            vec!["netns".into(), "add".into(), name.clone()],
            vec![
                "link".into(),
                "add".into(),
                host_link.clone(),
                "type".into(),
                "veth".into(),
                "peer".into(),
                "name".into(),
                inner_link.clone(),
            ],
            vec!["link".into(), "set".into(), inner_link.clone(), "netns".into(), name.clone()],
            vec!["addr".into(), "add".into(), format!("{host_address}/30"), "dev".into(), host_link.clone()],
            vec!["link".into(), "set".into(), host_link.clone(), "up".into()],
            vec![
                "-n".into(),
                name.clone(),
                "addr".into(),
                "add".into(),
                format!("{server_address}/30"),
                "dev".into(),
                inner_link.clone(),
            ],
            vec!["-n".into(), name.clone(), "link".into(), "set".into(), inner_link.clone(), "up".into()],
            vec!["-n".into(), name.clone(), "link".into(), "set".into(), "lo".into(), "up".into()],
        ];
        for step in &steps {
            let status = Command::new("ip").args(step).status();
            if !status.is_ok_and(|status| status.success()) {
                eprintln!("skipped: cannot make a network namespace here (`ip {}` failed; needs root)", step.join(" "));
                let _ = Command::new("ip").args(["netns", "del", &name]).status();
                let _ = Command::new("ip").args(["link", "del", &host_link]).status();
                return None;
            }
        }
        let count_file = tempfile::NamedTempFile::new().unwrap();
        let port = 18000 + (id % 1000) as u16;
        let server = Command::new("ip")
            .args(["netns", "exec", &name, "python3", "-c", COUNTING_SERVER, &server_address, &port.to_string()])
            .arg(count_file.path())
            .spawn()
            .unwrap();
        let namespace = Namespace { name, host_link, server_address, port, server, count_file };
        // The server listens before the build starts (its first line).
        for _ in 0..100 {
            if fs_err::read_to_string(namespace.count_file.path()).is_ok_and(|text| text.starts_with("listening")) {
                return Some(namespace);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the namespace's server did not start");
    }

    fn connections(&self) -> usize {
        let text = fs_err::read_to_string(self.count_file.path()).unwrap_or_default();
        text.lines().filter(|line| *line == "accepted").count()
    }
}

fn rand_suffix() -> u32 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos() % 5000).unwrap_or(0)
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
        let _ = Command::new("ip").args(["link", "del", &self.host_link]).status();
        let _ = Command::new("ip").args(["netns", "del", &self.name]).status();
    }
}

/// A TCP server (address, port, file): writes `listening`, then `accepted` per connection.
const COUNTING_SERVER: &str = r#"import socket, sys
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind((sys.argv[1], int(sys.argv[2])))
server.listen(16)
log = open(sys.argv[3], 'w', buffering=1)
log.write('listening\n')
while True:
    connection, _ = server.accept()
    log.write('accepted\n')
    connection.close()
"#;

/// Python: the probe, run by `setup.py` while the environment is installed.
pub fn python_probe(targets: &str) -> String {
    format!(
        "import socket, urllib.request\n\
         for host, port in {targets}:\n\
         \x20   try:\n\
         \x20       socket.create_connection((host, port), timeout=3).close()\n\
         \x20   except OSError:\n\
         \x20       pass\n\
         \x20   for url in ('http://%s:%d/' % (host, port), 'https://%s:%d/' % (host, port)):\n\
         \x20       try:\n\
         \x20           urllib.request.urlopen(url, timeout=5).read()\n\
         \x20       except Exception:\n\
         \x20           pass\n"
    )
}

/// Node: the probe, run as the package's `postinstall` script.
pub fn node_probe(targets: &str) -> String {
    let targets = targets.replace('(', "[").replace(')', "]");
    format!(
        "const net = require('net');\nconst http = require('http');\n\
         const proxy = new URL(process.env.HTTPS_PROXY || process.env.https_proxy || 'http://127.0.0.1:9');\n\
         const settle = (emitter, finish) => {{ emitter.on('error', finish); emitter.on('timeout', () => {{ emitter.destroy(); finish(); }}); }};\n\
         const direct = (host, port) => new Promise((done) => {{ const socket = net.connect({{ host, port, timeout: 3000 }}); socket.on('connect', () => {{ socket.destroy(); done(); }}); settle(socket, done); }});\n\
         const tunnel = (host, port) => new Promise((done) => {{ const request = http.request({{ host: proxy.hostname, port: proxy.port, method: 'CONNECT', path: `${{host}}:${{port}}`, timeout: 5000 }}); request.on('connect', (_, socket) => {{ socket.destroy(); done(); }}); request.on('response', (response) => {{ response.resume(); done(); }}); settle(request, done); request.end(); }});\n\
         const plain = (host, port) => new Promise((done) => {{ const request = http.request({{ host: proxy.hostname, port: proxy.port, path: `http://${{host}}:${{port}}/`, headers: {{ Host: `${{host}}:${{port}}` }}, timeout: 5000 }}); request.on('response', (response) => {{ response.resume(); done(); }}); settle(request, done); request.end(); }});\n\
         (async () => {{ for (const [host, port] of {targets}) {{ await direct(host, port); await tunnel(host, port); await plain(host, port); }} }})();\n"
    )
}

/// Rust: the probe as a `build.rs`, run by cargo while the environment's crates are
/// built.
pub fn rust_probe(targets: &str) -> String {
    format!(
        "use std::io::{{Read, Write}};\nuse std::net::{{TcpStream, ToSocketAddrs}};\nuse std::time::Duration;\n\n\
         fn ask(proxy: &str, request: &str) {{\n\
         \x20   let address = match proxy.to_socket_addrs().ok().and_then(|mut a| a.next()) {{ Some(a) => a, None => return }};\n\
         \x20   if let Ok(mut stream) = TcpStream::connect_timeout(&address, Duration::from_secs(5)) {{\n\
         \x20       let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));\n\
         \x20       let _ = stream.write_all(request.as_bytes());\n\
         \x20       let mut answer = [0u8; 256];\n\
         \x20       let _ = stream.read(&mut answer);\n\
         \x20   }}\n\
         }}\n\n\
         fn main() {{\n\
         \x20   let proxy = std::env::var(\"HTTPS_PROXY\").unwrap_or_default();\n\
         \x20   let proxy = proxy.trim_start_matches(\"http://\").trim_end_matches('/').to_string();\n\
         \x20   for (host, port) in {targets} {{\n\
         \x20       if let Ok(address) = format!(\"{{host}}:{{port}}\").parse::<std::net::SocketAddr>() {{\n\
         \x20           let _ = TcpStream::connect_timeout(&address, Duration::from_secs(3));\n\
         \x20       }}\n\
         \x20       ask(&proxy, &format!(\"CONNECT {{host}}:{{port}} HTTP/1.1\\r\\nHost: {{host}}:{{port}}\\r\\n\\r\\n\"));\n\
         \x20       ask(&proxy, &format!(\"GET http://{{host}}:{{port}}/ HTTP/1.1\\r\\nHost: {{host}}:{{port}}\\r\\n\\r\\n\"));\n\
         \x20   }}\n\
         \x20   println!(\"cargo:rerun-if-changed=build.rs\");\n\
         }}\n"
    )
}

/// What the build proxy refused, from the build logs of a data dir (the lines after
/// `--- refused by the build proxy ---`).
pub fn refused_in_build_logs(data_dir: &std::path::Path) -> Vec<String> {
    let mut refused = Vec::new();
    for entry in fs_err::read_dir(data_dir.join("logs/build")).into_iter().flatten().flatten() {
        let text = fs_err::read_to_string(entry.path()).unwrap_or_default();
        if let Some((_, after)) = text.split_once("--- refused by the build proxy ---\n") {
            refused.extend(after.lines().filter(|line| !line.is_empty()).map(str::to_string));
        }
    }
    refused
}
