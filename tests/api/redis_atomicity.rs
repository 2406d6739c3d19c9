//! What "atomic" means in Redis, on a real `redis-server`, as the README explains it beside the
//! Lua chapters: a script (or one command) runs with nothing between its commands, but it is
//! not all-or-nothing. A script that fails midway keeps what it wrote before the error, and
//! `MULTI`/`EXEC` applies every queued command that did not fail: no rollback in either.

use oversell::launch::redis_server::RedisServer;
use redis::Value;

#[tokio::test]
async fn a_failing_script_keeps_its_earlier_writes_and_exec_rolls_nothing_back() {
    let redis = RedisServer::start().unwrap();
    let client = redis::Client::open(redis.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let get = |key: &'static str| redis::cmd("GET").arg(key).to_owned();

    // A script that writes, then fails (INCR on a string): the error reaches the caller, the
    // write stays.
    let script = redis::Script::new(
        "redis.call('SET', KEYS[1], 'written') return redis.call('INCR', KEYS[1])",
    );
    let failed = script.key("a").invoke_async::<i64>(&mut conn).await;
    assert!(failed.is_err(), "{failed:?}");
    let a: Option<String> = get("a").query_async(&mut conn).await.unwrap();
    assert_eq!(a.as_deref(), Some("written"));

    // A transaction whose middle command fails at run time: the others are applied.
    let replies: Value = redis::pipe()
        .atomic()
        .ignore_errors()
        .set("b", 1)
        .incr("a", 1)
        .set("c", 1)
        .query_async(&mut conn)
        .await
        .unwrap();
    let Value::Array(replies) = replies else {
        panic!("EXEC answered {replies:?}");
    };
    assert!(matches!(replies[1], Value::ServerError(_)), "{replies:?}");
    for key in ["b", "c"] {
        let set: Option<i64> = get(key).query_async(&mut conn).await.unwrap();
        assert_eq!(
            set,
            Some(1),
            "{key}: EXEC kept the commands that did not fail"
        );
    }
}
