//! What the server serves ([`Exporter`]): the source of listings, how the
//! metrics are named and where they are, where log lines go; and, for a
//! program that serves more than the IPVS series (the agent), routes of
//! its own beside them ([`Exporter::with_route`]) and metrics of its own
//! after them ([`Exporter::with_appendix`]), all under the one server's
//! limits.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use hyper::Response;

use crate::listing::{Listing, RendererHome};
use crate::{log_line, Appendix, MetricPrefix, Renderer, ScrapeBody, Source};

/// The answer a route's handler is working out.
pub type RouteFuture = Pin<Box<dyn Future<Output = Response<ScrapeBody>> + Send>>;

/// A route's handler: called for each GET or HEAD of its path.
pub type Route = Arc<dyn Fn() -> RouteFuture + Send + Sync>;

/// Where log lines go: one call per line, without the newline.
pub type LogSink = Arc<dyn Fn(&str) + Send + Sync>;

/// What the server serves: the source of listings and how to name and
/// place the metrics.
#[non_exhaustive]
pub struct Exporter<S> {
    /// Where each scrape's listing comes from.
    pub source: S,
    /// The metric name prefix.
    pub metric_prefix: MetricPrefix,
    /// The path of the metrics (`/metrics`).
    pub telemetry_path: String,
    /// Where the log lines go (stderr unless [`Exporter::with_log`]).
    pub log: LogSink,
    /// Paths answered by handlers of the program's (`/healthz`), beside
    /// `/` and the telemetry path.
    routes: Vec<(String, Route)>,
    /// Appended to every scrape, after the exporter's own metrics.
    pub(crate) appendix: Option<Appendix>,
    /// One renderer for every scrape: it keeps the label sets while the
    /// table stays the same (lent to a listing while responses send it).
    pub(crate) renderer: RendererHome,
}

impl<S> std::fmt::Debug for Exporter<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exporter")
            .field("metric_prefix", &self.metric_prefix)
            .field("telemetry_path", &self.telemetry_path)
            .finish_non_exhaustive()
    }
}

impl<S: Source> Exporter<S> {
    /// An exporter of `source`'s listings under `metric_prefix` at
    /// `telemetry_path`.
    pub fn new(source: S, metric_prefix: MetricPrefix, telemetry_path: impl Into<String>) -> Self {
        Exporter {
            source,
            telemetry_path: telemetry_path.into(),
            log: Arc::new(|line| eprintln!("{line}")),
            routes: Vec::new(),
            appendix: None,
            renderer: Arc::new(Mutex::new(Some(Renderer::new(&metric_prefix)))),
            metric_prefix,
        }
    }

    /// The same exporter, its log lines sent to `log` instead of stderr.
    #[must_use]
    pub fn with_log(mut self, log: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.log = Arc::new(log);
        self
    }

    /// The same exporter, answering GET and HEAD of `path` with what
    /// `handler` gives (a path of the exporter's, `/` or the telemetry
    /// path, stays the exporter's).
    ///
    /// ```
    /// use hyper::StatusCode;
    /// use ipvsnl_exporter::{text_response, ClientSource, Exporter, MetricPrefix};
    /// let exporter = Exporter::new(ClientSource::new(None), MetricPrefix::default(), "/metrics")
    ///     .with_route("/healthz", || async { text_response(StatusCode::OK, "ok\n") });
    /// assert_eq!(exporter.route_paths().collect::<Vec<_>>(), ["/healthz"]);
    /// ```
    #[must_use]
    pub fn with_route<F, H>(mut self, path: impl Into<String>, handler: H) -> Self
    where
        H: Fn() -> F + Send + Sync + 'static,
        F: Future<Output = Response<ScrapeBody>> + Send + 'static,
    {
        let route: Route = Arc::new(move || Box::pin(handler()));
        self.routes.push((path.into(), route));
        self
    }

    /// The same exporter, every scrape followed by what `appendix` writes
    /// (the program's own metrics, in the exposition format).
    #[must_use]
    pub fn with_appendix(
        mut self,
        appendix: impl Fn(&mut Vec<u8>) + Send + Sync + 'static,
    ) -> Self {
        self.appendix = Some(Arc::new(appendix));
        self
    }

    /// The paths of the routes added with [`with_route`](Self::with_route).
    pub fn route_paths(&self) -> impl Iterator<Item = &str> {
        self.routes.iter().map(|(path, _)| path.as_str())
    }

    /// The handler of `path`, if a route of the program's.
    pub(crate) fn route(&self, path: &str) -> Option<&Route> {
        self.routes.iter().find(|(p, _)| p == path).map(|(_, r)| r)
    }

    /// One scrape, the whole text: the listing, rendered, then the
    /// exporter's own metrics. A failed listing gives only those, with
    /// `up 0`, and one log line.
    pub async fn scrape(&self) -> Vec<u8> {
        self.scrape_body().await.into_vec()
    }

    /// One scrape as a response body rendered in parts (what the server
    /// sends): the listing is taken now, the text as the body is read.
    pub async fn scrape_body(&self) -> ScrapeBody {
        let started = Instant::now();
        let listing = Arc::new(self.list(0).await);
        ScrapeBody::from_listing(listing, started, None, self.appendix.clone())
    }

    /// Takes listing `id`: the table and the totals, ready to render. A
    /// failed listing is an empty one, `up` 0, and one log line.
    pub(crate) async fn list(&self, id: u64) -> Listing {
        let home = Arc::clone(&self.renderer);
        match self.source.scrape().await {
            Ok(snapshot) => {
                let totals = match snapshot.totals {
                    Ok(t) => Some(t),
                    Err(e) => {
                        let msg = "totals unavailable";
                        (self.log)(&log_line("warn", msg, Some(&e.to_string())));
                        None
                    }
                };
                Listing::new(id, snapshot.table, totals, true, &self.metric_prefix, home)
            }
            Err(e) => {
                (self.log)(&log_line("error", "scrape failed", Some(&e.to_string())));
                Listing::new(id, Vec::new(), None, false, &self.metric_prefix, home)
            }
        }
    }
}
