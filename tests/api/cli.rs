//! Start-up flags: an invalid value stops `oversell serve` with one line naming the flag.

use std::process::Command;

/// Arguments, environment, and the flag the error must name.
type Case = (
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
    &'static str,
);

#[test]
fn an_invalid_flag_stops_start_up_with_one_line_naming_it() {
    let cases: [Case; 10] = [
        (&["--lock-tier", "chubby"], &[], "--lock-tier"),
        // The valid values on the same line, from the API crate's list.
        (
            &["--lock-tier", "chubby"],
            &[],
            "postgres-fenced, atomic-deduct, custom]",
        ),
        // A real tier, without the lock store it needs.
        (&["--lock-tier", "redlock"], &[], "--lock-store redlock"),
        (&["--lock-tier", "zookeeper"], &[], "--zookeeper"),
        (&["--lock-tier", "postgres"], &[], "--postgres"),
        (&[], &[("WAIT", "poll")], "--wait"),
        (&["--lock-ttl-ms", "0"], &[], "--lock-ttl-ms"),
        (&["--port", "http"], &[], "--port"),
        // A proxy named by host name: its X-Real-IP would be believed from nowhere.
        (
            &[],
            &[("TRUSTED_PROXIES", "10.0.0.0/8,nginx")],
            "--trusted-proxies",
        ),
        (&["--client-burst", "0"], &[], "--client-burst"),
    ];
    for (args, env, flag) in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_oversell"))
            .arg("serve")
            .args(args)
            .envs(env.iter().copied())
            .output()
            .expect("run oversell");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
        assert!(stderr.contains(flag), "names {flag}: {stderr}");
    }
}
