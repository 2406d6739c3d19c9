//! The ballot box's parsing, and its scripts on a real `redis-server`.
use super::*;
use crate::launch::redis_server::RedisServer;

#[test]
fn a_poll_is_read_from_its_fields() {
    let fields: BTreeMap<String, String> = [
        ("chapter", "none-race"),
        ("round", "2"),
        ("open", "0"),
        ("revealed", "1"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let poll = parse_poll(&fields).unwrap();
    assert_eq!(
        poll,
        Poll {
            chapter: "none-race".into(),
            round: 2,
            open: false,
            revealed: true
        }
    );
    assert_eq!(parse_poll(&BTreeMap::new()), None);
}

#[tokio::test]
async fn a_delete_that_names_fewer_chapters_than_were_polled_deletes_nothing() {
    let redis = RedisServer::start().unwrap();
    let pool = RedisPool::new(&redis.url()).unwrap();
    let mut conn = pool.conn().await.unwrap();
    // A vote opened on a chapter after the delete read the chapters (it read none).
    let votes = poll_votes("none-race", 1);
    let () = redis::pipe()
        .zadd(POLL_CHAPTERS, "none-race", 1)
        .ignore()
        .hset(&votes, "student-001", "a")
        .ignore()
        .query_async(&mut conn)
        .await
        .unwrap();
    let stale = DELETE
        .key(POLL_VERSION)
        .key(POLL)
        .key(POLL_CHAPTERS)
        .key(POLL_ROUNDS)
        .key(POLL_RUNS)
        .arg(POLL_CHANNEL)
        .invoke_async::<i64>(&mut conn)
        .await
        .unwrap();
    assert_eq!(stale, -1);
    let exists: redis::Cmd = redis::cmd("EXISTS").arg(POLL_CHAPTERS).arg(&votes).clone();
    let kept: u8 = exists.query_async(&mut conn).await.unwrap();
    assert_eq!(kept, 2);
    // Read again, the chapter's votes go with the class.
    delete_all(&pool).await.unwrap();
    let left: u8 = exists.query_async(&mut conn).await.unwrap();
    assert_eq!(left, 0);
}
