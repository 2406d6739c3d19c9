//! One watcher of the poll per instance, whatever the number of viewers: it listens on
//! [`POLL_CHANNEL`], re-reads the poll when told of a change (at most once every
//! [`COALESCE`], so 300 votes in a second cost each instance four reads, not 300), renders
//! the public view once (a read that finds the poll's version and everything else as they were
//! sends nothing), and hands it to every `/poll/events` stream through a
//! `tokio::sync::watch` channel, which keeps only the newest: a slow stream skips to it, and
//! memory stays one view whatever the number of streams.
//!
//! Messages sent while the listener was disconnected are lost, so it re-reads on every
//! (re)connect, and every [`REFRESH`] in any case.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::{watch, Notify, OwnedSemaphorePermit, Semaphore};

use super::ballot_box;
use super::standings::{self, PollState, PublicView};
use crate::keys::POLL_CHANNEL;
use crate::redis_pool::RedisPool;

/// The least time between two reads of the poll: a burst of votes is read once.
pub const COALESCE: Duration = Duration::from_millis(250);
/// The poll is read this often even when no message came.
pub const REFRESH: Duration = Duration::from_secs(5);
/// After a failed read, the next one.
const RETRY: Duration = Duration::from_secs(1);

/// The poll as this instance last read it.
#[derive(Debug)]
pub struct Current {
    /// Whether the poll was read yet: a stream waits for it rather than say "idle" wrongly.
    pub loaded: bool,
    /// The view's version, and whether a change counted it (see `Snapshot::counted`).
    pub version: u64,
    pub counted: bool,
    /// The round taking votes (chapter, round): a vote names it to its script.
    pub open_round: Option<(String, u8)>,
    /// The public view as JSON, serialised once for every stream.
    pub json: Arc<str>,
}

impl Current {
    fn of(view: &PublicView, counted: bool) -> Current {
        let open_round = match (view.state, &view.question_id, view.round) {
            (PollState::Open, Some(chapter), Some(round)) => Some((chapter.clone(), round)),
            _ => None,
        };
        Current {
            loaded: true,
            version: view.version,
            counted,
            open_round,
            // A view is strings, numbers and maps of them: serializing cannot fail.
            json: serde_json::to_string(view)
                .expect("a poll view serializes")
                .into(),
        }
    }
}

/// The instance's watcher and its streams' limit.
pub struct PollWatch {
    current: watch::Sender<Arc<Current>>,
    /// Set by every message; the reader takes it. A `Notify` keeps one permit however many
    /// messages came while the reader was busy: that is the coalescing.
    wake: Notify,
    /// At most `--max-event-streams` poll streams on this instance.
    streams: Arc<Semaphore>,
    max_streams: usize,
}

/// One stream's place: the newest view, and its permit.
pub struct Watching {
    pub rx: watch::Receiver<Arc<Current>>,
    _permit: OwnedSemaphorePermit,
}

impl PollWatch {
    pub fn new(max_streams: usize) -> PollWatch {
        let unknown = Current {
            loaded: false,
            version: 0,
            counted: false,
            open_round: None,
            json: "{}".into(),
        };
        PollWatch {
            current: watch::Sender::new(Arc::new(unknown)),
            wake: Notify::new(),
            streams: Arc::new(Semaphore::new(max_streams)),
            max_streams,
        }
    }

    /// A place for one more stream; `Err(max)` when the instance serves its most.
    pub fn watch(&self) -> Result<Watching, usize> {
        let permit = Arc::clone(&self.streams)
            .try_acquire_owned()
            .map_err(|_| self.max_streams)?;
        Ok(Watching {
            rx: self.current.subscribe(),
            _permit: permit,
        })
    }

    /// The round open when the poll was last read.
    pub fn open_round(&self) -> Option<(String, u8)> {
        self.current.borrow().open_round.clone()
    }

    /// Asks for a read soon (this instance changed the poll: its streams need not wait for
    /// the message to come back).
    pub fn changed(&self) {
        self.wake.notify_one();
    }

    /// Listens and reads until aborted.
    pub fn spawn(self: &Arc<Self>, resource: RedisPool) -> tokio::task::JoinHandle<()> {
        let watch = Arc::clone(self);
        tokio::spawn(async move {
            tokio::join!(watch.listen(&resource), watch.read(&resource));
        })
    }

    /// Wakes the reader on every message, reconnecting with backoff.
    async fn listen(&self, resource: &RedisPool) {
        let mut backoff = Duration::from_millis(100);
        loop {
            match self.listen_once(resource).await {
                Ok(()) => {
                    tracing::debug!("poll channel closed; reconnecting");
                    backoff = Duration::from_millis(100);
                }
                Err(err) => tracing::debug!(%err, "poll channel: connect failed; retrying"),
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(2));
        }
    }

    async fn listen_once(&self, resource: &RedisPool) -> Result<(), redis::RedisError> {
        let mut pubsub = resource.pubsub().await?;
        pubsub.subscribe(POLL_CHANNEL).await?;
        // Whatever changed while disconnected.
        self.wake.notify_one();
        let mut messages = pubsub.into_on_message();
        while messages.next().await.is_some() {
            self.wake.notify_one();
        }
        Ok(())
    }

    async fn read(&self, resource: &RedisPool) {
        loop {
            tokio::select! {
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(REFRESH) => {}
            }
            match ballot_box::snapshot(resource).await {
                Ok(mut snapshot) => {
                    if snapshot.poll.is_some() {
                        // Its reveal will show the rung's shortest break: searched now, once.
                        super::rung_break::warm_soon();
                    }
                    // A store that has seen no change answers its clock as the version, new
                    // at every read: the view keeps the version it was first sent with, so an
                    // unchanged view is not sent again. It is still above every version
                    // before and below the first one counted.
                    let current = Arc::clone(&self.current.borrow());
                    if !snapshot.counted && current.loaded && !current.counted {
                        snapshot.version = current.version;
                    }
                    let next = Current::of(&standings::public(&snapshot), snapshot.counted);
                    self.current.send_if_modified(|current| {
                        let changed = !current.loaded || current.json != next.json;
                        if changed {
                            *current = Arc::new(next);
                        }
                        changed
                    });
                }
                Err(err) => {
                    tracing::debug!(%err, "could not read the poll; trying again");
                    tokio::time::sleep(RETRY).await;
                    self.wake.notify_one();
                }
            }
            tokio::time::sleep(COALESCE).await;
        }
    }
}
