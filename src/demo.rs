//! `tripline demo`: a newcomer's first run. Starts a collector (this binary, `collect`) on free
//! loopback ports with a temporary data dir, plays every sample scenario into it over OTLP/HTTP —
//! real MCP servers (this binary again, `demo --serve-mcp …`) talking to the sample agent hosts
//! over stdio and Streamable HTTP, spans from the OpenTelemetry SDK — stops the collector with
//! SIGTERM so it flushes, prints `check` and `report tools`, and writes `report html`.
//!
//! Subprocesses rather than in-process calls: the collector and the reports are exercised exactly
//! as a user runs them, and the demo stays independent of their internal APIs.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Parser;
use samples::generate::{GenerateOptions, Target};
use samples::host::ServerLauncher;

#[derive(clap::Args)]
pub struct DemoArgs {
    /// Keep the temporary data dir (its path is printed) instead of deleting it.
    #[arg(long)]
    pub keep: bool,
    /// Write the HTML report here (default: report.html in the kept data dir's parent with
    /// --keep, else a new tripline-demo-report-*.html in the temporary directory).
    #[arg(long, value_name = "FILE")]
    pub report: Option<std::path::PathBuf>,
    /// Internal: run one sample MCP server (the demo starts these itself).
    #[arg(long, hide = true, num_args = 1.., allow_hyphen_values = true, value_name = "ARGS")]
    pub serve_mcp: Option<Vec<String>>,
}

const LISTENING: &str = "tripline collect: listening ";

pub fn run(args: DemoArgs) -> anyhow::Result<ExitCode> {
    // Unless the user asked for logs, keep the libraries' INFO chatter (rmcp sessions opening and
    // closing) off the newcomer's terminal: the runtime's threads get a silent default dispatcher.
    // The samples' own spans are unaffected (they carry their own dispatcher).
    let quiet = std::env::var_os("TRIPLINE_LOG").is_none();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_start(move || {
            if quiet {
                std::mem::forget(tracing::dispatcher::set_default(&tracing::Dispatch::none()));
            }
        })
        .build()
        .context("cannot start the async runtime")?;
    if let Some(server_args) = args.serve_mcp {
        let serve = samples::serve::ServeArgs::try_parse_from(
            std::iter::once("serve-mcp".to_string()).chain(server_args),
        )
        .context("invalid --serve-mcp arguments")?;
        runtime.block_on(samples::serve::serve(serve))?;
        return Ok(ExitCode::SUCCESS);
    }

    let exe = std::env::current_exe()
        .context("cannot find the tripline executable to start the collector")?;
    let temp = tempfile::Builder::new()
        .prefix("tripline-demo-")
        .tempdir()
        .context("cannot create a temporary directory; check TMPDIR")?;
    let data_dir = temp.path().join("data");
    let policy = temp.path().join("policy.toml");
    std::fs::write(&policy, samples::manifest::POLICY_TOML)
        .with_context(|| format!("cannot write {}", policy.display()))?;

    println!(
        "tripline demo: a collector with data dir {}",
        data_dir.display()
    );
    let (mut collector, http) = start_collector(&exe, &data_dir)?;
    println!("tripline demo: collector listening on http://{http}; playing the sample scenarios over MCP ...");
    let options = GenerateOptions {
        target: Target::Endpoint(format!("http://{http}")),
        deterministic: false,
        only: Vec::new(),
        revision: Default::default(),
        launcher: ServerLauncher {
            program: exe.clone(),
            prefix: vec!["demo".to_string(), "--serve-mcp".to_string()],
        },
    };
    let played = runtime.block_on(samples::generate::generate(&options));
    let stopped = stop_collector(&mut collector);
    let played = played.context("playing the sample scenarios failed")?;
    stopped?;
    println!(
        "tripline demo: {} scenarios played, collector stopped",
        played.len()
    );

    println!("\n$ tripline check --policy samples/policy.toml\n");
    report(
        &exe,
        &data_dir,
        &["check".as_ref(), "--policy".as_ref(), policy.as_os_str()],
    )?;
    println!("\n$ tripline report tools\n");
    report(&exe, &data_dir, &["report".as_ref(), "tools".as_ref()])?;
    let page = match args.report {
        Some(p) => p,
        None if args.keep => temp.path().join("report.html"),
        None => {
            tempfile::Builder::new()
                .prefix("tripline-demo-report-")
                .suffix(".html")
                .tempfile()
                .context("cannot create the report file; check TMPDIR")?
                .keep()
                .context("cannot keep the report file; check TMPDIR")?
                .1
        }
    };
    println!(
        "\n$ tripline report html --policy samples/policy.toml --output {}\n",
        page.display()
    );
    report(
        &exe,
        &data_dir,
        &[
            "report".as_ref(),
            "html".as_ref(),
            "--policy".as_ref(),
            policy.as_os_str(),
            "--output".as_ref(),
            page.as_os_str(),
        ],
    )?;
    println!(
        "tripline demo: HTML report written to {} (open it in a browser)",
        page.display()
    );
    if args.keep {
        let kept = temp.keep();
        println!(
            "\ntripline demo: data kept in {}",
            kept.join("data").display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Log filter for the subprocesses: the user's `TRIPLINE_LOG`, else warnings only.
fn quiet_log() -> std::ffi::OsString {
    std::env::var_os("TRIPLINE_LOG").unwrap_or_else(|| "warn".into())
}

/// Starts `tripline collect` on free ports and returns it with its HTTP address.
fn start_collector(exe: &Path, data_dir: &Path) -> anyhow::Result<(Child, String)> {
    let mut child = Command::new(exe)
        .arg("--data-dir")
        .arg(data_dir)
        .args(["collect", "--http", "127.0.0.1:0", "--grpc", "127.0.0.1:0"])
        .env("TRIPLINE_LOG", quiet_log())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start `tripline collect`")?;
    let stderr = child
        .stderr
        .take()
        .context("collector has no stderr pipe")?;
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        // Forward the collector's diagnostics after the listening line, so the pipe never fills.
        let mut sent = false;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if !sent && line.starts_with(LISTENING) {
                let _ = tx.send(line);
                sent = true;
            } else {
                eprintln!("{line}");
            }
        }
    });
    let line = match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(line) => line,
        Err(_) => {
            let _ = child.kill();
            let status = child.wait().ok();
            bail!("the collector did not report its listening address within 60 s (exit {status:?}); see its messages above");
        }
    };
    let http = parse_http(&line)
        .with_context(|| format!("cannot read the collector's address from {line:?}"))?;
    Ok((child, http))
}

/// `tripline collect: listening http=ADDR grpc=ADDR data_dir=DIR` -> `ADDR` of http.
fn parse_http(line: &str) -> Option<String> {
    line.strip_prefix(LISTENING)?
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix("http="))
        .map(str::to_string)
}

/// SIGTERM, then wait for the collector to drain and flush (kill after 60 s).
fn stop_collector(child: &mut Child) -> anyhow::Result<()> {
    let pid = libc::pid_t::try_from(child.id()).context("collector pid out of range")?;
    // SAFETY: kill(2) with a pid we spawned and still own (not yet waited on) and a valid signal.
    if unsafe { libc::kill(pid, libc::SIGTERM) } != 0 {
        let _ = child.kill();
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().context("cannot wait for the collector")? {
            if status.success() {
                return Ok(());
            }
            bail!("the collector exited with {status} while stopping; its messages are above");
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            bail!("the collector did not stop within 60 s of SIGTERM; it was killed");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs a report subcommand and copies its stdout; exit 1 (findings) is expected, 2 is an error.
fn report(exe: &Path, data_dir: &Path, args: &[&std::ffi::OsStr]) -> anyhow::Result<()> {
    let out = Command::new(exe)
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .env("TRIPLINE_LOG", quiet_log())
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run the report")?;
    print!("{}", String::from_utf8_lossy(&out.stdout));
    match out.status.code() {
        Some(0 | 1) => Ok(()),
        _ => bail!(
            "`tripline {}` failed with {}",
            args.iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" "),
            out.status
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_collectors_listening_line() {
        assert_eq!(
            parse_http("tripline collect: listening http=127.0.0.1:43111 grpc=127.0.0.1:43112 data_dir=/tmp/x").as_deref(),
            Some("127.0.0.1:43111")
        );
        assert_eq!(parse_http("tripline collect: starting"), None);
    }

    #[test]
    fn serve_mcp_takes_the_server_arguments_verbatim() {
        #[derive(clap::Parser)]
        struct T {
            #[command(flatten)]
            demo: DemoArgs,
        }
        let t = T::try_parse_from([
            "t",
            "--serve-mcp",
            "--server",
            "crm",
            "--transport",
            "stdio",
            "--endpoint",
            "http://x",
        ])
        .unwrap();
        assert_eq!(
            t.demo.serve_mcp.unwrap(),
            [
                "--server",
                "crm",
                "--transport",
                "stdio",
                "--endpoint",
                "http://x"
            ]
        );
    }
}
