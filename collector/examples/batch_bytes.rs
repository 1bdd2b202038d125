//! Where a converted request's bytes go: the Arrow memory of each column of `request_path`'s
//! batches (the same synthetic requests, converted the same way), per span, largest first.
//!
//! Why: the request thread writes every byte of its batch into memory it has not touched
//! since the batch before was freed on the writer's core, and the Parquet writer reads all of
//! it again; `memmove` into the column builders was 6% of the collector's samples at the peak
//! (BENCHMARKS.md, session 36).
//!
//! ```sh
//! cargo run -p collector --example batch_bytes 20 1000
//! ```

#[path = "synthetic/mod.rs"]
mod synthetic;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let requests: usize = args.next().map_or(Ok(20), |a| a.parse())?;
    let spans: usize = args.next().map_or(Ok(1000), |a| a.parse())?;
    let bodies = synthetic::bodies(requests, spans);
    let batches = synthetic::converted_batches(&bodies[1..])?;
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    let body_bytes: usize = bodies[1..].iter().map(Vec::len).sum();
    let schema = batches[0].schema();
    let mut columns: Vec<(String, usize)> = (0..schema.fields().len())
        .map(|i| {
            let bytes = batches
                .iter()
                .map(|b| b.column(i).to_data().get_slice_memory_size().unwrap_or(0))
                .sum();
            (schema.field(i).name().clone(), bytes)
        })
        .collect();
    columns.sort_by_key(|c| std::cmp::Reverse(c.1));
    let total: usize = columns.iter().map(|c| c.1).sum();
    println!(
        "{rows} rows; protobuf body {:.0} bytes per span; Arrow batch {:.0} bytes per span",
        body_bytes as f64 / rows as f64,
        total as f64 / rows as f64
    );
    for (name, bytes) in columns.iter().filter(|c| c.1 > 0) {
        println!(
            "{:>9.1}  {:>5.1}%  {name}",
            *bytes as f64 / rows as f64,
            100.0 * *bytes as f64 / total as f64
        );
    }
    Ok(())
}
