//! An object store that lists only the part files the snapshot validated.
//!
//! Why: DataFusion's listing table reads every `*.parquet` file under `spans/`, and one file with
//! a broken footer fails the whole scan without naming it. Hiding the files that failed
//! validation from the listing (instead of listing single files) keeps the Hive partition columns
//! and partition pruning exactly as they are; hiding files that appeared after the snapshot keeps
//! the scanned file count, and the de-duplication against the WAL tail, exact.

use std::collections::HashSet;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use datafusion::object_store::local::LocalFileSystem;
use datafusion::object_store::path::Path;
use datafusion::object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
};
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};

/// Delegates everything to `inner`, but lists only `allowed` objects below `scope` (objects
/// elsewhere, e.g. a file a user's SQL names, are listed as they are); over the local file
/// system ([`AllowListed::local`]) ranged reads skip `LocalFileSystem`'s zero fill.
#[derive(Debug)]
pub struct AllowListed {
    inner: Arc<dyn ObjectStore>,
    /// The local file system, when `inner` is it: ranged reads go through
    /// [`super::local_reads`] (no zero fill).
    local: Option<Arc<LocalFileSystem>>,
    scope: Path,
    allowed: Arc<HashSet<Path>>,
}

impl AllowListed {
    pub fn new(inner: Arc<dyn ObjectStore>, scope: Path, allowed: HashSet<Path>) -> Self {
        Self {
            inner,
            local: None,
            scope,
            allowed: Arc::new(allowed),
        }
    }

    /// Over the local file system (rooted at `/`), its ranged reads without a zero fill.
    pub fn local(scope: Path, allowed: HashSet<Path>) -> Self {
        let fs = Arc::new(LocalFileSystem::new());
        Self {
            local: Some(Arc::clone(&fs)),
            ..Self::new(fs, scope, allowed)
        }
    }

    fn listed(scope: &Path, allowed: &HashSet<Path>, location: &Path) -> bool {
        !location.prefix_matches(scope) || allowed.contains(location)
    }
}

impl fmt::Display for AllowListed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "AllowListed({}, {} files)",
            self.inner,
            self.allowed.len()
        )
    }
}

#[async_trait]
impl ObjectStore for AllowListed {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        self.inner.get_opts(location, options).await
    }

    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        match &self.local {
            Some(fs) => super::local_reads::get_ranges(fs, location, ranges).await,
            None => self.inner.get_ranges(location, ranges).await,
        }
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        let allowed = Arc::clone(&self.allowed);
        let scope = self.scope.clone();
        self.inner
            .list(prefix)
            .try_filter(move |m| {
                futures::future::ready(Self::listed(&scope, &allowed, &m.location))
            })
            .boxed()
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        let mut r = self.inner.list_with_delimiter(prefix).await?;
        r.objects
            .retain(|m| Self::listed(&self.scope, &self.allowed, &m.location));
        Ok(r)
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}
