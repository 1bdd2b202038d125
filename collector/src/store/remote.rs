//! The store on S3-compatible object storage: `--data-dir s3://bucket/prefix`.
//!
//! Why this shape: object storage has no rename and no fsync, but a single PUT is atomic (an
//! object is visible whole or not at all) and it is shared by every machine. So the collector
//! keeps what needs a local disk local (the WAL, its checkpoint, the `LOCK`, and the part file
//! being written, under `--wal-dir`) and publishes each finished part file with one PUT under
//! `<prefix>/spans/date=…/hour=…/part-<epoch>-<first seq>-<last seq>.parquet`
//! ([`schemas::layout::uploaded_part_id`]). The WAL is released only after the PUT succeeded.
//!
//! Exactly once: the object name says which WAL records of its partition it holds, so on replay
//! (after a crash, or after an upload that failed) the collector lists the partition and drops
//! the rows an object of its own epoch already holds ([`crate::store::committed_records`]), and
//! an upload retried for the same records has the same name and overwrites the object instead
//! of adding a copy. Another collector on the same prefix has another epoch: its objects never
//! match ours, and names never clash.
//!
//! Configuration is the standard AWS environment (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, read by `object_store`'s `AmazonS3Builder::from_env`);
//! an `http://` endpoint is allowed without `AWS_ALLOW_HTTP` (which is honoured when set).
//! Requests are path-style (`<endpoint>/<bucket>/<key>`), which every S3-compatible server takes.

use std::fmt;
use std::future::Future;
use std::path::Path as FsPath;
use std::sync::Arc;

use futures::TryStreamExt;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use schemas::layout::{self, Partition};

/// What can go wrong talking to object storage.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The `s3://` data dir is malformed.
    #[error("invalid data dir {url:?}: {reason}; expected s3://BUCKET or s3://BUCKET/PREFIX")]
    BadUrl { url: String, reason: &'static str },
    /// The S3 client cannot be built from the environment.
    #[error("cannot configure S3 access for {url}: {source}; set AWS_ENDPOINT_URL (for a server other than AWS), AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_REGION")]
    Config {
        url: String,
        source: object_store::Error,
    },
    /// A request failed (after `object_store`'s own retries).
    #[error("{op} {path} failed: {source}")]
    Request {
        op: &'static str,
        path: String,
        source: object_store::Error,
    },
    /// The local file to upload cannot be read.
    #[error("cannot read {path} to upload it: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    /// The client's own runtime could not start, or stopped.
    #[error("the object storage client is not running: {0}")]
    Runtime(String),
}

/// Where a store on object storage lives: a bucket and a key prefix (no leading or trailing
/// slash; empty for the bucket's root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteLocation {
    pub bucket: String,
    pub prefix: String,
}

impl RemoteLocation {
    /// `Some` when `data_dir` is an `s3://` URL: the location, or why the URL is malformed.
    /// `None` for a local directory.
    pub fn of(data_dir: &FsPath) -> Option<Result<RemoteLocation, RemoteError>> {
        let url = data_dir.to_str()?;
        let rest = url.strip_prefix(layout::S3_SCHEME)?;
        Some(Self::parse(url, rest))
    }

    fn parse(url: &str, rest: &str) -> Result<RemoteLocation, RemoteError> {
        let bad = |reason| RemoteError::BadUrl {
            url: url.to_string(),
            reason,
        };
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(bad("no bucket name"));
        }
        let prefix = prefix.trim_matches('/');
        if prefix
            .split('/')
            .any(|s| (s.is_empty() && !prefix.is_empty()) || s == "." || s == "..")
        {
            return Err(bad("the prefix has an empty, `.` or `..` segment"));
        }
        Ok(RemoteLocation {
            bucket: bucket.to_string(),
            prefix: prefix.to_string(),
        })
    }

    /// `s3://bucket/prefix`.
    pub fn url(&self) -> String {
        match self.prefix.as_str() {
            "" => self.bucket_url(),
            p => format!("{}/{p}", self.bucket_url()),
        }
    }

    /// `s3://bucket`: the URL an object store is registered under.
    pub fn bucket_url(&self) -> String {
        format!("{}{}", layout::S3_SCHEME, self.bucket)
    }

    /// `<prefix>/spans`, the key prefix of the span dataset.
    pub fn spans_path(&self) -> ObjectPath {
        self.child(layout::SPANS_DIR)
    }

    /// `<prefix>/<table>/date=…/hour=…` (`spans/` or `logs/`).
    pub fn partition_path(&self, partition: Partition) -> ObjectPath {
        self.child(&format!(
            "{}/{}/{}",
            partition.table.dir_name(),
            partition.date_dir_name(),
            partition.hour_dir_name()
        ))
    }

    fn child(&self, rest: &str) -> ObjectPath {
        let key = match self.prefix.as_str() {
            "" => rest.to_string(),
            p => format!("{p}/{rest}"),
        };
        ObjectPath::from_iter(key.split('/'))
    }

    /// The object URL of a key in this bucket (for messages).
    pub fn object_url(&self, key: &ObjectPath) -> String {
        format!("{}/{key}", self.bucket_url())
    }

    /// An S3 client for this bucket, configured from the AWS environment variables.
    pub fn connect(&self) -> Result<Arc<dyn ObjectStore>, RemoteError> {
        let mut builder = AmazonS3Builder::from_env().with_bucket_name(&self.bucket);
        let endpoint = builder
            .get_config_value(&AmazonS3ConfigKey::S3Endpoint)
            .or_else(|| builder.get_config_value(&AmazonS3ConfigKey::Endpoint));
        // A plain-http endpoint (a local server, a test) works with the four variables alone;
        // an explicit AWS_ALLOW_HTTP (either way) is left as it is.
        if endpoint.is_some_and(|e| e.starts_with("http://"))
            && std::env::var_os("AWS_ALLOW_HTTP").is_none()
        {
            builder = builder.with_allow_http(true);
        }
        let store = builder.build().map_err(|source| RemoteError::Config {
            url: self.url(),
            source,
        })?;
        Ok(Arc::new(store))
    }
}

/// The bucket as the collector's threads use it: blocking calls (the batcher is a plain thread,
/// and start-up replay runs inside the server's runtime), each run on a small runtime of its own.
#[derive(Clone)]
pub struct RemoteSink {
    pub location: RemoteLocation,
    store: Arc<dyn ObjectStore>,
    runtime: Arc<OwnRuntime>,
}

impl fmt::Debug for RemoteSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RemoteSink({})", self.location.url())
    }
}

impl RemoteSink {
    /// A client for `location`, checked with one listing of the prefix, so a wrong endpoint,
    /// bucket or credentials stop the collector at start instead of at the first upload.
    pub fn connect(location: RemoteLocation) -> Result<RemoteSink, RemoteError> {
        let store = location.connect()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("tripline-upload")
            .enable_all()
            .build()
            .map_err(|e| RemoteError::Runtime(e.to_string()))?;
        let sink = RemoteSink {
            location,
            store,
            runtime: Arc::new(OwnRuntime(Some(runtime))),
        };
        let spans = sink.location.spans_path();
        let store = Arc::clone(&sink.store);
        let probe = spans.clone();
        sink.run(async move { store.list_with_delimiter(Some(&probe)).await })?
            .map_err(|source| RemoteError::Request {
                op: "listing",
                path: sink.location.object_url(&spans),
                source,
            })?;
        Ok(sink)
    }

    /// The client (for readers that share it).
    pub fn store(&self) -> Arc<dyn ObjectStore> {
        Arc::clone(&self.store)
    }

    /// Upload the finished local file `local` as `name` in `partition`, with one PUT (atomic:
    /// readers see the whole object or none). Returns the object's URL.
    pub fn upload(
        &self,
        local: &FsPath,
        partition: Partition,
        name: &str,
    ) -> Result<String, RemoteError> {
        let bytes = std::fs::read(local).map_err(|source| RemoteError::Read {
            path: local.display().to_string(),
            source,
        })?;
        let key = self.location.partition_path(partition).join(name);
        let store = Arc::clone(&self.store);
        let target = key.clone();
        self.run(async move { store.put(&target, PutPayload::from(bytes)).await })?
            .map_err(|source| RemoteError::Request {
                op: "upload to",
                path: self.location.object_url(&key),
                source,
            })?;
        Ok(self.location.object_url(&key))
    }

    /// The part file names in `partition` (every collector's).
    pub fn part_names(&self, partition: Partition) -> Result<Vec<String>, RemoteError> {
        let dir = self.location.partition_path(partition);
        let store = Arc::clone(&self.store);
        let prefix = dir.clone();
        let listed = self.run(async move {
            store
                .list(Some(&prefix))
                .map_ok(|meta| meta.location.filename().unwrap_or_default().to_string())
                .try_collect::<Vec<String>>()
                .await
        })?;
        let names = listed.map_err(|source| RemoteError::Request {
            op: "listing",
            path: self.location.object_url(&dir),
            source,
        })?;
        Ok(names
            .into_iter()
            .filter(|n| layout::is_part_file(n))
            .collect())
    }

    /// Run `fut` on the client's runtime and wait for it (callable from any thread, including
    /// a worker of another runtime).
    fn run<T: Send + 'static>(
        &self,
        fut: impl Future<Output = T> + Send + 'static,
    ) -> Result<T, RemoteError> {
        let handle = self
            .runtime
            .0
            .as_ref()
            .map(|r| r.handle().clone())
            .ok_or_else(|| RemoteError::Runtime("stopped".into()))?;
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        handle.spawn(async move {
            let _ = tx.send(fut.await);
        });
        rx.recv()
            .map_err(|_| RemoteError::Runtime("the request task ended without an answer".into()))
    }
}

/// A runtime that may be dropped anywhere: a tokio runtime dropped inside another runtime's
/// context panics, so it is shut down in the background instead.
struct OwnRuntime(Option<tokio::runtime::Runtime>);

impl Drop for OwnRuntime {
    fn drop(&mut self) {
        if let Some(r) = self.0.take() {
            r.shutdown_background();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(s: &str) -> Result<RemoteLocation, RemoteError> {
        RemoteLocation::of(FsPath::new(s)).expect("an s3 url")
    }

    #[test]
    fn urls_parse_into_bucket_and_prefix() {
        assert!(RemoteLocation::of(FsPath::new("/data/tripline")).is_none());
        assert!(RemoteLocation::of(FsPath::new("./s3:/x")).is_none());
        let l = loc("s3://traces/team-a/prod/").unwrap();
        assert_eq!(
            (l.bucket.as_str(), l.prefix.as_str()),
            ("traces", "team-a/prod")
        );
        assert_eq!(l.url(), "s3://traces/team-a/prod");
        assert_eq!(l.spans_path().as_ref(), "team-a/prod/spans");
        let p = Partition::of_unix_nanos(1_796_007_845_000_000_000);
        assert_eq!(
            l.partition_path(p).as_ref(),
            "team-a/prod/spans/date=2026-11-30/hour=3"
        );
        let root = loc("s3://traces").unwrap();
        assert_eq!(root.prefix, "");
        assert_eq!(root.url(), "s3://traces");
        assert_eq!(root.spans_path().as_ref(), "spans");
        for bad in ["s3://", "s3:///x", "s3://b/a//c", "s3://b/../c"] {
            let e = loc(bad).unwrap_err().to_string();
            assert!(e.contains("expected s3://BUCKET"), "{bad}: {e}");
        }
    }
}
