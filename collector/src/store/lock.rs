//! One writer per data directory.
//!
//! Why: two processes writing one store destroy each other's work. Start-up removes leftover
//! temporary Parquet files and replays and releases WAL segments, which is right when the process
//! is the only writer and ruinous when another one is still appending to those files (an `ingest`
//! next to a running `collect` unlinked the collector's open WAL segment; two collectors
//! interleaved WAL frames). So every command that writes takes an exclusive `flock` on
//! `<data>/LOCK` *before* anything else in the directory is touched, and holds it for the life of
//! the process; the kernel releases it when the process dies, even by `kill -9`, so a crash never
//! leaves a stale lock behind.
//!
//! The holder writes who it is into the same file (pid, command, and for a collector the addresses
//! it listens on) so a second writer can say exactly what is in the way and what to do instead.
//! Reading commands (`check`, `query`, `report`, …) never take the lock: they read committed
//! Parquet files, which are only ever renamed into place.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use schemas::layout::LOCK_FILE;
use serde::{Deserialize, Serialize};

/// Who holds a data directory, as written into `<data>/LOCK` by the holder.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    pub pid: u32,
    /// The subcommand: `collect`, `ingest`.
    pub command: String,
    /// RFC 3339 time the lock was taken.
    pub since: String,
    /// OTLP/HTTP address of a collector (set once it listens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<SocketAddr>,
    /// OTLP/gRPC address of a collector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grpc: Option<SocketAddr>,
}

impl Holder {
    fn describe(&self) -> String {
        let mut s = format!(
            "`tripline {}` (pid {}, since {})",
            self.command, self.pid, self.since
        );
        if let Some(http) = self.http {
            s.push_str(&format!(", OTLP/HTTP on {http}"));
        }
        if let Some(grpc) = self.grpc {
            s.push_str(&format!(", OTLP/gRPC on {grpc}"));
        }
        s
    }
}

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("{dir} is in use by {holder}; only one process may write a data directory. {advice}")]
    Held {
        dir: String,
        holder: String,
        /// What to do instead, tailored to what the holder is.
        advice: String,
        /// The holder as it described itself (`None` when it had not written yet).
        info: Option<Box<Holder>>,
    },
    #[error("cannot open the lock file {path}: {source}; check the data directory is writable")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// The exclusive lock on one data directory; released when dropped (or when the process dies).
#[derive(Debug)]
pub struct DataDirLock {
    file: File,
    path: PathBuf,
    holder: Holder,
}

impl DataDirLock {
    /// Take the lock of `data_dir` for `command`, creating the directory if needed. Fails at once
    /// (never waits) when another process holds it, naming that process.
    pub fn acquire(data_dir: &Path, command: &str) -> Result<DataDirLock, LockError> {
        let path = data_dir.join(LOCK_FILE);
        let io = |source| LockError::Io {
            path: path.display().to_string(),
            source,
        };
        std::fs::create_dir_all(data_dir).map_err(io)?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let info = read_holder(&path);
                let holder = info
                    .as_ref()
                    .map(Holder::describe)
                    .unwrap_or_else(|| "another tripline process".to_string());
                return Err(LockError::Held {
                    dir: data_dir.display().to_string(),
                    advice: advice(command, data_dir, info.as_ref()),
                    holder,
                    info: info.map(Box::new),
                });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        let mut lock = DataDirLock {
            file,
            path,
            holder: Holder {
                pid: std::process::id(),
                command: command.to_string(),
                since: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                http: None,
                grpc: None,
            },
        };
        lock.write_holder()?;
        Ok(lock)
    }

    /// Publish the collector's listen addresses, so `tripline ingest` (and people) can find it.
    pub fn publish_endpoints(
        &mut self,
        http: SocketAddr,
        grpc: SocketAddr,
    ) -> Result<(), LockError> {
        self.holder.http = Some(http);
        self.holder.grpc = Some(grpc);
        self.write_holder()
    }

    /// What this process wrote about itself.
    pub fn holder(&self) -> &Holder {
        &self.holder
    }

    fn write_holder(&mut self) -> Result<(), LockError> {
        let bytes = serde_json::to_vec_pretty(&self.holder).unwrap_or_default();
        let path = &self.path;
        let io = |source| LockError::Io {
            path: path.display().to_string(),
            source,
        };
        self.file.set_len(0).map_err(io)?;
        self.file.seek(SeekFrom::Start(0)).map_err(io)?;
        self.file.write_all(&bytes).map_err(io)?;
        self.file.write_all(b"\n").map_err(io)
    }
}

/// Whether a writer holds `data_dir`'s lock right now. Probed with a non-blocking *shared* lock,
/// released at once, so probes never block each other or a writer; a missing lock file means no
/// writer.
pub fn is_held(data_dir: &Path) -> std::io::Result<bool> {
    let file = match File::open(data_dir.join(LOCK_FILE)) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    match file.try_lock_shared() {
        Ok(()) => {
            let _ = file.unlock();
            Ok(false)
        }
        Err(TryLockError::WouldBlock) => Ok(true),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

/// The holder of `data_dir`'s lock right now, or `None` when nobody holds it. For reading
/// commands that want to say "a collector is writing here" (never blocks, never keeps the lock).
pub fn current_holder(data_dir: &Path) -> Option<Holder> {
    if !is_held(data_dir).unwrap_or(false) {
        return None;
    }
    Some(read_holder(&data_dir.join(LOCK_FILE)).unwrap_or_default())
}

fn read_holder(path: &Path) -> Option<Holder> {
    let mut s = String::new();
    File::open(path).ok()?.read_to_string(&mut s).ok()?;
    serde_json::from_str(&s).ok()
}

fn advice(command: &str, data_dir: &Path, holder: Option<&Holder>) -> String {
    let dir = data_dir.display();
    match (command, holder.and_then(|h| h.http)) {
        ("ingest", Some(http)) => format!(
            "Send the files through the running collector instead: \
             `tripline ingest --via http://{http} FILES…`, or import into another directory \
             with --data-dir."
        ),
        ("ingest", None) => format!(
            "Wait for it to finish, or import into another directory with --data-dir (not {dir})."
        ),
        _ => format!(
            "Stop it first, or give this process its own store with --data-dir (not {dir})."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_writer_is_refused_and_told_who_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut first = DataDirLock::acquire(dir.path(), "collect").unwrap();
        first
            .publish_endpoints(
                "127.0.0.1:4318".parse().unwrap(),
                "127.0.0.1:4317".parse().unwrap(),
            )
            .unwrap();
        let err = DataDirLock::acquire(dir.path(), "ingest").unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains(&format!("pid {}", std::process::id())),
            "{msg}"
        );
        assert!(msg.contains("OTLP/HTTP on 127.0.0.1:4318"), "{msg}");
        assert!(msg.contains("--via http://127.0.0.1:4318"), "{msg}");
        let holder = current_holder(dir.path()).expect("held");
        assert_eq!(holder.command, "collect");
        drop(first);
        assert!(current_holder(dir.path()).is_none());
        let again = DataDirLock::acquire(dir.path(), "ingest").unwrap();
        assert_eq!(again.holder().command, "ingest");
    }
}
