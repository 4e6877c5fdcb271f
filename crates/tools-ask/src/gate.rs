//! The `QuestionGate` trait — whatever shows a card to a human and brings the reply back —
//! and the channel gate for embedders, who draw the card in their own UI.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::{mpsc, oneshot};

use crate::card::{Card, Reply};

/// Why a gate brought no reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GateError {
    /// Nobody answered within the card's timeout.
    #[error("no answer within {} s", .0.as_secs())]
    TimedOut(Duration),
    /// No human can be reached through this gate (no terminal, the client or harness went
    /// away); the message says which.
    #[error("{0}")]
    Unavailable(String),
}

/// What a gate can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GateAbilities {
    /// Whether several options can be chosen on one card. When false, a multi-select
    /// question is shown as a single choice and the result says so.
    pub multi_select: bool,
}

/// Shows cards to a human and waits for the reply.
///
/// Implementations must return within `timeout` (with [`GateError::TimedOut`]) and must
/// fail at once with [`GateError::Unavailable`] when no human can be reached — never block
/// forever.
#[tools_core::async_trait]
pub trait QuestionGate: Send + Sync {
    /// A short name for doctor and messages: `mcp-elicitation`, `terminal`, `channel`.
    fn name(&self) -> &str;
    /// What this gate can show (may depend on the client, e.g. its protocol version).
    fn abilities(&self) -> GateAbilities;
    /// For `doctor`: whether a human can be reached now, and how cards are shown.
    fn status(&self) -> Result<String, String> {
        Ok(format!("cards go to the `{}` gate", self.name()))
    }
    /// Shows `card` and waits up to `timeout` for the reply.
    async fn ask(&self, card: &Card, timeout: Duration) -> Result<Reply, GateError>;
}

/// A card waiting for the embedder's reply: draw [`PendingCard::card`], then call
/// [`PendingCard::reply`]. Dropping it unanswered makes the question unavailable.
#[derive(Debug)]
pub struct PendingCard {
    /// The card to draw.
    pub card: Card,
    /// Whether several options may be chosen here (false when the channel was built
    /// single-choice).
    pub multi_select: bool,
    reply: oneshot::Sender<Reply>,
}

impl PendingCard {
    /// Sends the human's reply back to the waiting call. Returns false when the call has
    /// already given up (timed out or was cancelled).
    pub fn reply(self, reply: Reply) -> bool {
        self.reply.send(reply).is_ok()
    }
}

type Handler = Arc<dyn Fn(Card) -> BoxFuture<'static, Result<Reply, GateError>> + Send + Sync>;

enum Route {
    Channel(mpsc::Sender<PendingCard>),
    Closure(Handler),
}

/// The gate for embedders: cards go to a channel (or a closure) the harness serves, and the
/// harness draws them itself.
pub struct ChannelGate {
    route: Route,
    abilities: GateAbilities,
}

impl ChannelGate {
    /// A gate and the receiving end the harness reads cards from. `capacity` bounds how many
    /// cards may wait at once (at least 1). When the receiver is dropped, questions fail at
    /// once as unavailable.
    pub fn channel(capacity: usize) -> (ChannelGate, mpsc::Receiver<PendingCard>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (
            ChannelGate {
                route: Route::Channel(tx),
                abilities: GateAbilities { multi_select: true },
            },
            rx,
        )
    }

    /// A gate that calls `handler` for every card; the handler resolves to the reply.
    pub fn from_fn<F, Fut>(handler: F) -> ChannelGate
    where
        F: Fn(Card) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Reply, GateError>> + Send + 'static,
    {
        ChannelGate {
            route: Route::Closure(Arc::new(move |c| Box::pin(handler(c)))),
            abilities: GateAbilities { multi_select: true },
        }
    }

    /// Declares that the harness's UI cannot pick several options.
    pub fn single_choice(mut self) -> Self {
        self.abilities.multi_select = false;
        self
    }
}

#[tools_core::async_trait]
impl QuestionGate for ChannelGate {
    fn name(&self) -> &str {
        "channel"
    }
    fn abilities(&self) -> GateAbilities {
        self.abilities
    }
    async fn ask(&self, card: &Card, timeout: Duration) -> Result<Reply, GateError> {
        let fut = async {
            match &self.route {
                Route::Closure(h) => h(card.clone()).await,
                Route::Channel(tx) => {
                    let (reply_tx, reply_rx) = oneshot::channel();
                    let pending = PendingCard {
                        card: card.clone(),
                        multi_select: self.abilities.multi_select && card.multi_select,
                        reply: reply_tx,
                    };
                    // A closed receiver means no harness is listening: fail at once (a full
                    // channel waits, inside the card's timeout).
                    let gone = || {
                        GateError::Unavailable(
                            "the embedding harness stopped reading question cards".into(),
                        )
                    };
                    if tx.is_closed() {
                        return Err(gone());
                    }
                    tx.send(pending).await.map_err(|_| gone())?;
                    reply_rx.await.map_err(|_| {
                        GateError::Unavailable(
                            "the embedding harness dropped the card without a reply".into(),
                        )
                    })
                }
            }
        };
        tokio::time::timeout(timeout, fut)
            .await
            .unwrap_or(Err(GateError::TimedOut(timeout)))
    }
}
