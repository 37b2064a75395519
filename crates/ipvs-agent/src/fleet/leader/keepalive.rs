//! The lease's keepalive task of an [`Election`](crate::fleet::leader::election::Election):
//! one renewal every TTL/3, each bounded by that interval, and after each,
//! when asked, who leads the election as etcd answers.
//!
//! It reports [`Renewal`]s; the election's driver turns them into the
//! events of [`Leadership`](crate::fleet::leader::state_machine::Leadership).

use std::time::Duration;

use etcd_client::{Client, LeaseKeepAliveStream, LeaseKeeper};
use tokio::sync::{mpsc, watch};
use tokio::time::{sleep, sleep_until, timeout, Instant};

use crate::fleet::leader::state_machine::Timing;

/// How long a follower waits to ask again who leads, after a renewal
/// etcd answered and a question it did not.
const LEADER_RETRY: Duration = Duration::from_millis(100);

/// The election's leader key as etcd answered: its key and lease, or no
/// leader.
pub(super) type Seen = Option<(Vec<u8>, i64)>;

/// What one keepalive came to.
#[derive(Debug)]
pub(super) enum Renewal {
    /// The keepalive sent at the instant was answered with the TTL; then
    /// the election's leader, if it was asked and answered.
    Renewed(Instant, Duration, Option<Seen>),
    /// Not answered, or answered with an error: the lease may still live.
    Failed,
    /// etcd said the lease is gone.
    LeaseGone,
}

/// When the keepalive task asks etcd who leads after a renewal: while
/// this agent is elected (its key must still lead), and always with
/// peers (its reports name the leader it sees).
pub(super) struct Watching {
    pub(super) our_key: watch::Receiver<Option<Vec<u8>>>,
    pub(super) always: bool,
}

/// Renews the lease every TTL/3, each try bounded by that interval; after
/// each renewal, when `watching` says, asks who leads the election, and
/// reports the renewal with the answer.
pub(super) async fn keep_alive<I: From<Renewal>>(
    client: Client,
    lease: i64,
    name: String,
    timing: Timing,
    watching: Watching,
    out: mpsc::Sender<I>,
) {
    let interval = timing.keepalive_interval();
    let mut stream: Option<(LeaseKeeper, LeaseKeepAliveStream)> = None;
    let mut next = Instant::now() + interval;
    loop {
        sleep_until(next).await;
        let sent = Instant::now();
        next = sent + interval;
        let renewed = timeout(interval, renew(&client, lease, &mut stream, timing.ttl)).await;
        let input = match renewed {
            Ok(Ok(Some(ttl))) => {
                let elected = watching.our_key.borrow().is_some();
                let seen = if elected {
                    // Once: the renewal is the leader's lease.
                    leader(&client, &name, interval / 2).await
                } else if watching.always {
                    // Until answered (etcd just back may not answer at
                    // once), at most until the next keepalive: meanwhile
                    // this follower still reports itself etcd-blind, and
                    // so goes on supporting the leader it cannot name yet.
                    let mut seen = None;
                    while seen.is_none() && Instant::now() + LEADER_RETRY < next {
                        let within = (next - Instant::now()).min(interval / 2);
                        seen = leader(&client, &name, within).await;
                        if seen.is_none() {
                            tracing::info!(
                                "election: lease renewed, but etcd did not say who leads: \
                                 asking again"
                            );
                            sleep(LEADER_RETRY).await;
                        }
                    }
                    seen
                } else {
                    None
                };
                Renewal::Renewed(sent, ttl, seen)
            }
            Ok(Ok(None)) => Renewal::LeaseGone,
            Ok(Err(e)) if e.to_string().contains("lease not found") => Renewal::LeaseGone,
            Ok(Err(e)) => {
                tracing::warn!(error = %e, lease, "election: keepalive failed");
                stream = None;
                Renewal::Failed
            }
            Err(_) => {
                tracing::warn!(lease, "election: keepalive not answered");
                stream = None;
                Renewal::Failed
            }
        };
        let gone = matches!(input, Renewal::LeaseGone);
        if out.send(I::from(input)).await.is_err() || gone {
            return;
        }
    }
}

/// Who leads the election `name`, asked within `within`: `None` if etcd
/// did not answer, `Some(None)` if nobody leads.
async fn leader(client: &Client, name: &str, within: Duration) -> Option<Seen> {
    let mut election = client.election_client();
    match timeout(within, election.leader(name)).await {
        Ok(Ok(mut r)) => Some(r.take_kv().map(|kv| (kv.key().to_vec(), kv.lease()))),
        // The election's own "nobody leads", not a member's "etcdserver:
        // no leader" (a cluster without a raft leader answers nothing).
        Ok(Err(e)) if e.to_string().contains("election: no leader") => Some(None),
        _ => None,
    }
}

/// One keepalive on the lease's stream (opened if there is none): the TTL
/// etcd answers (`granted`, the TTL of the grant, when the stream is
/// opened), `None` if the lease is gone.
async fn renew(
    client: &Client,
    lease: i64,
    stream: &mut Option<(LeaseKeeper, LeaseKeepAliveStream)>,
    granted: Duration,
) -> Result<Option<Duration>, etcd_client::Error> {
    let Some((keeper, responses)) = stream.as_mut() else {
        // Opening the stream sends a keepalive and reads its answer (an
        // error if the lease is gone); the TTL is the one granted.
        *stream = Some(client.lease_client().keep_alive(lease).await?);
        return Ok(Some(granted));
    };
    keeper.keep_alive().await?;
    match responses.message().await? {
        Some(r) if r.ttl() > 0 => Ok(Some(Duration::from_secs(r.ttl() as u64))),
        Some(_) => Ok(None),
        None => Err(etcd_client::Error::LeaseKeepAliveError(
            "the keepalive stream ended".into(),
        )),
    }
}
