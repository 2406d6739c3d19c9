//! What a server tells of itself outside any session: its four-letter words, and the file
//! holding its process id (how the `zk-node-down` fault finds the process to stop).

use std::time::Duration;

/// The file in a server's dir (the parent of its `dataDir`) holding its process id.
pub const PID_FILE: &str = "zookeeper.pid";
/// How long a four-letter question may take before the server counts as not answering.
const ASK_TIMEOUT: Duration = Duration::from_millis(500);

/// Asks a four-letter word (`srvr`, `conf`, …) of the server at `addr`; `None` if it does not
/// answer in time (or the word is not on its whitelist: it then closes without a word).
pub async fn four_letter(addr: &str, word: &str) -> Option<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let asked = async {
        let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
        stream.write_all(word.as_bytes()).await.ok()?;
        // The server answers and closes.
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.ok()?;
        Some(answer).filter(|a| !a.is_empty())
    };
    tokio::time::timeout(ASK_TIMEOUT, asked)
        .await
        .ok()
        .flatten()
}
