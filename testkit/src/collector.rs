//! A collector binary (`tripline` or `tripline-collector`) running `collect` as a child process
//! on free loopback ports, for tests that need the real process (signals, locks, threads).
//!
//! Why one helper: starting the binary, waiting for its `listening` line and parsing the
//! addresses out of it was written once per test file; the line's format belongs to the
//! collector, so it is read in one place.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The line `collect` prints on stderr once it accepts connections.
const LISTENING: &str = "tripline collect: listening ";

/// A running `collect` child; killed (SIGKILL) on drop unless [`RunningCollector::stop`] ran.
pub struct RunningCollector {
    pub child: Child,
    /// The OTLP/HTTP address.
    pub http: SocketAddr,
    /// The OTLP/gRPC address.
    pub grpc: SocketAddr,
}

impl RunningCollector {
    /// Starts `bin collect --http 127.0.0.1:0 --grpc 127.0.0.1:0 --data-dir DIR EXTRA...` with
    /// warnings-only logging and waits until it listens. Panics with the collector's stderr when
    /// it exits first.
    pub fn start(bin: impl AsRef<Path>, data_dir: &Path, extra: &[&str]) -> RunningCollector {
        let bin = bin.as_ref();
        let mut child = Command::new(bin)
            .env("TRIPLINE_LOG", "warn")
            .args(["collect", "--http", "127.0.0.1:0", "--grpc", "127.0.0.1:0"])
            .arg("--data-dir")
            .arg(data_dir)
            .args(extra)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        let mut lines = BufReader::new(child.stderr.take().expect("piped stderr")).lines();
        let mut seen = Vec::new();
        let (http, grpc) = loop {
            let Some(line) = lines.next() else {
                panic!(
                    "{} exited before listening; its stderr:\n{}",
                    bin.display(),
                    seen.join("\n")
                );
            };
            let line = line.expect("read the collector's stderr");
            if let Some(addrs) = parse_listening(&line) {
                break addrs;
            }
            seen.push(line);
        };
        // Keep draining stderr so the child never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        RunningCollector { child, http, grpc }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGTERM (the graceful path that commits everything) and wait, at most 60 s.
    pub fn stop(mut self) -> ExitStatus {
        let pid = i32::try_from(self.child.id()).expect("a pid fits i32");
        // SAFETY: kill(2) on our own child's pid; no memory is shared.
        let sent = unsafe { libc::kill(pid, libc::SIGTERM) };
        assert_eq!(sent, 0, "SIGTERM to the collector");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for the collector") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the collector did not stop in 60 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for RunningCollector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `tripline collect: listening http=ADDR grpc=ADDR data_dir=DIR...` -> the two addresses.
pub fn parse_listening(line: &str) -> Option<(SocketAddr, SocketAddr)> {
    let rest = line.strip_prefix(LISTENING)?;
    let field = |key: &str| {
        rest.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .and_then(|a| a.parse().ok())
    };
    Some((field("http=")?, field("grpc=")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listening_line_gives_both_addresses() {
        let (http, grpc) = parse_listening(
            "tripline collect: listening http=127.0.0.1:43111 grpc=127.0.0.1:43112 data_dir=/tmp/x",
        )
        .expect("a listening line");
        assert_eq!(http, "127.0.0.1:43111".parse().unwrap());
        assert_eq!(grpc, "127.0.0.1:43112".parse().unwrap());
        assert_eq!(parse_listening("tripline collect: starting"), None);
        assert_eq!(
            parse_listening("tripline collect: listening http=nonsense grpc=127.0.0.1:1"),
            None
        );
    }
}
