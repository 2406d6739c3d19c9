//! The fleet's control messages: what one instance tells all the others over the control
//! channel. A leaf module (it imports nothing of the crate) so that every layer that sends or
//! handles a message can use it without importing the others.

use serde::{Deserialize, Serialize};

/// A message on the control channel (`keys::CONTROL_CHANNEL`), as JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum Control {
    /// A room's settings or faults changed: reload them. With `ack`, each instance says it has
    /// by pushing its id to that list (`keys::reload_acks`), so the change can be answered only
    /// once the whole fleet sells under it.
    Reload {
        room: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ack: Option<String>,
    },
    /// The named instance aborts at once.
    Crash { instance: String },
    /// The named instance stops its whole process for `ms`, then resumes.
    Freeze { instance: String, ms: u64 },
}

impl Control {
    pub fn reload(room: &str) -> Self {
        Control::Reload {
            room: room.to_owned(),
            ack: None,
        }
    }

    /// A reload each instance acknowledges under `ack` once it has read the room again.
    pub fn reload_acked(room: &str, ack: &str) -> Self {
        Control::Reload {
            room: room.to_owned(),
            ack: Some(ack.to_owned()),
        }
    }

    pub fn to_json(&self) -> String {
        // A plain enum of strings and integers: serializing it cannot fail.
        serde_json::to_string(self).expect("control messages serialize")
    }
}
