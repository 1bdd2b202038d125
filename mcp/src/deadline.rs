//! The `query` time limit, enforced inside the DataFusion plan.
//!
//! Why not only `tokio::time::timeout` around the query: an operator can run for minutes inside
//! one `poll` (a cross join feeding an aggregate produces every batch without ever returning to
//! the runtime), so the timer never gets to fire and the answer comes when the query ends
//! (measured: a 4-way cross join of 278 spans ran 210 s under a 1 s timeout). So every node of
//! the physical plan is wrapped in [`DeadlineExec`], whose stream checks the deadline before and
//! after each batch it hands up: the query fails within one batch of the deadline, wherever the
//! time is spent, and dropping it frees the rest.

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{RecordBatchStream, SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use futures::Stream;

/// The error a stream returns once the deadline has passed.
pub const EXCEEDED: &str = "the query reached its time limit";

/// Wraps every node of `plan` so that its output stream fails once `deadline` has passed.
pub fn with_deadline(
    plan: Arc<dyn ExecutionPlan>,
    deadline: Instant,
) -> Result<Arc<dyn ExecutionPlan>> {
    plan.transform_up(|node| {
        Ok(Transformed::yes(
            Arc::new(DeadlineExec::new(node, deadline)) as Arc<dyn ExecutionPlan>,
        ))
    })
    .map(|t| t.data)
}

/// A pass-through node: same output, same properties, plus a deadline check per batch.
#[derive(Debug)]
pub struct DeadlineExec {
    input: Arc<dyn ExecutionPlan>,
    deadline: Instant,
}

impl DeadlineExec {
    pub fn new(input: Arc<dyn ExecutionPlan>, deadline: Instant) -> Self {
        Self { input, deadline }
    }
}

impl DisplayAs for DeadlineExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeadlineExec")
    }
}

impl ExecutionPlan for DeadlineExec {
    fn name(&self) -> &str {
        "DeadlineExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.len() != 1 {
            return Err(DataFusionError::Internal(format!(
                "DeadlineExec takes one child, not {}",
                children.len()
            )));
        }
        Ok(Arc::new(Self::new(children.swap_remove(0), self.deadline)))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let inner = self.input.execute(partition, context)?;
        Ok(Box::pin(DeadlineStream {
            inner,
            deadline: self.deadline,
            done: false,
        }))
    }
}

struct DeadlineStream {
    inner: SendableRecordBatchStream,
    deadline: Instant,
    done: bool,
}

impl DeadlineStream {
    fn expired(&mut self) -> Poll<Option<Result<RecordBatch>>> {
        self.done = true;
        Poll::Ready(Some(Err(DataFusionError::ResourcesExhausted(
            EXCEEDED.to_string(),
        ))))
    }
}

impl Stream for DeadlineStream {
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.done {
            return Poll::Ready(None);
        }
        if Instant::now() >= self.deadline {
            return self.expired();
        }
        let next = self.inner.as_mut().poll_next(cx);
        if matches!(next, Poll::Ready(Some(Ok(_)))) && Instant::now() >= self.deadline {
            return self.expired();
        }
        next
    }
}

impl RecordBatchStream for DeadlineStream {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }
}
