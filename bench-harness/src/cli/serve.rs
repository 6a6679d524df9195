//! `tidegate serve`: `run`, with the running workload's metrics served at `/metrics`: the
//! Prometheus text format 0.0.4 that kube-scheduler serves, or OpenMetrics when the scraper
//! asks for it (`Accept: application/openmetrics-text`), as client_golang negotiates;
//! `--linger` keeps serving the last workload's final metrics after the run.

use super::run::{RunArgs, run_with};
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;
use tidegate_bench::error::HarnessError;
use tidegate_bench::run;

#[derive(clap::Args)]
pub(crate) struct ServeArgs {
    /// Address for the /metrics endpoint.
    ///
    /// Example: --listen 127.0.0.1:9464
    #[arg(long, default_value = "127.0.0.1:9464")]
    pub listen: std::net::SocketAddr,
    /// Keep serving the last workload's final metrics after the run, until Ctrl-C or SIGTERM.
    #[arg(long)]
    pub linger: bool,
    #[command(flatten)]
    pub run: RunArgs,
}

/// `tidegate serve`: the run, with a /metrics endpoint on a thread of its own.
pub(crate) fn serve(args: ServeArgs) -> Result<ExitCode, HarnessError> {
    let live = std::sync::Arc::new(run::LiveScheduler::default());
    if args.linger {
        live.keep_last();
    }
    let listener = std::net::TcpListener::bind(args.listen)
        .map_err(|e| HarnessError::Run(format!("--listen {}: {e}", args.listen)))?;
    let addr = listener.local_addr().unwrap_or(args.listen);
    eprintln!("serving metrics at http://{addr}/metrics");
    let l2 = live.clone();
    std::thread::Builder::new()
        .name("tidegate-metrics".into())
        .spawn(move || {
            for stream in listener.incoming().flatten() {
                let _ = answer(stream, &l2);
            }
        })
        .map_err(|e| HarnessError::Run(e.to_string()))?;
    let code = run_with(args.run, Some(live))?;
    if args.linger && tidegate_bench::interrupt::requested().is_none() {
        eprintln!(
            "run finished; still serving its last metrics at http://{addr}/metrics (Ctrl-C to stop)"
        );
        while tidegate_bench::interrupt::requested().is_none() {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    Ok(code)
}

/// One HTTP/1.1 exchange: `GET /metrics` gets the exposition, anything else 404.
fn answer(mut stream: std::net::TcpStream, live: &run::LiveScheduler) -> std::io::Result<()> {
    use std::io::{BufRead, BufReader};
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    // The headers: only Accept matters (content negotiation, as client_golang's).
    let mut line = String::new();
    let mut openmetrics = false;
    while reader.read_line(&mut line)? > 2 {
        if let Some((k, v)) = line.split_once(':')
            && k.trim().eq_ignore_ascii_case("accept")
        {
            openmetrics |= v.contains("application/openmetrics-text");
        }
        line.clear();
    }
    let path = request.split_whitespace().nth(1).unwrap_or("");
    let (status, body, ctype) = if request.starts_with("GET ") && path == "/metrics" {
        let snaps: Vec<(Option<String>, tidegate_bench::output::prom::Snapshot)> = live
            .snapshot()
            .map(|(w, s)| (Some(w), s))
            .into_iter()
            .collect();
        if openmetrics {
            (
                "200 OK",
                tidegate_bench::output::prom::encode(&snaps),
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )
        } else {
            (
                "200 OK",
                tidegate_bench::output::prom::encode_prometheus(&snaps),
                "text/plain; version=0.0.4; charset=utf-8",
            )
        }
    } else {
        (
            "404 Not Found",
            "not found: try /metrics\n".to_string(),
            "text/plain",
        )
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}
