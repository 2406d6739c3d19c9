//! One connection per lab room and instance, logged in as the room's lock-store user.
//!
//! Not the lock store's pool: that one logs in as the default user, and a multiplexed
//! connection cannot change user per command. A connection found broken, or made for an
//! older password, is made again; a refused login (a lock store restarted without its
//! users) makes the room's user again first.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::keys::Keys;
use crate::lock_store::LockStore;
use crate::redis_pool::{Conn, StoreError};

use super::{acl, LabLock, STEP_LIMIT};

/// Past this many rooms the connections are all dropped and made again as needed: rooms
/// come and go over a day of workshops, and each entry holds a socket.
const MAX_ROOMS: usize = 256;

/// This instance's lab connections, by room. A std `Mutex`: held only to look up or insert,
/// never across an `.await`.
#[derive(Default)]
pub struct LabConns {
    rooms: Mutex<HashMap<String, (String, Conn)>>,
}

impl LabConns {
    /// A connection for `keys`' room logged in as its user.
    pub async fn conn(
        &self,
        store: &LockStore,
        keys: &Keys,
        lab: &LabLock,
    ) -> Result<Conn, StoreError> {
        if let Some(conn) = self.cached(keys.room(), &lab.user.password) {
            return Ok(conn);
        }
        let user = &lab.user;
        let login = || {
            store
                .pool()
                .dedicated_as(&user.name, &user.password, STEP_LIMIT)
        };
        let conn = match login().await {
            Err(err) if acl::login_refused(&err) => {
                acl::prepare(store.pool(), keys, user).await?;
                login().await?
            }
            other => other?,
        };
        let mut rooms = self.rooms.lock().unwrap_or_else(|p| p.into_inner());
        if rooms.len() >= MAX_ROOMS {
            rooms.clear();
        }
        rooms.insert(
            keys.room().to_owned(),
            (user.password.clone(), conn.clone()),
        );
        Ok(conn)
    }

    fn cached(&self, room: &str, password: &str) -> Option<Conn> {
        let rooms = self.rooms.lock().unwrap_or_else(|p| p.into_inner());
        rooms
            .get(room)
            .filter(|(known, conn)| known == password && !conn.is_broken())
            .map(|(_, conn)| conn.clone())
    }
}
