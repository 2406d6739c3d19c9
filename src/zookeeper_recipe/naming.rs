//! Where the lock nodes live and what they are called: Curator's naming, so a Curator client
//! would queue in the same line.

/// Where the lock dirs live: one persistent dir per room, never deleted, so that its sequence
/// numbers never restart.
pub const LOCK_ROOT: &str = "/oversell/locks";
/// Curator's lock name: nodes are `_c_<uuid>-lock-<sequence>`.
pub(super) const LOCK_NAME: &str = "-lock-";

/// The room's lock dir.
pub fn lock_dir(room: &str) -> String {
    format!("{LOCK_ROOT}/{room}")
}

/// The sequence number at the end of a lock node's name.
pub(super) fn sequence_of(name: &str) -> Option<u64> {
    let (_, digits) = name.rsplit_once(LOCK_NAME)?;
    digits.parse().ok()
}

/// The lock nodes among `children`, lowest sequence first.
pub(super) fn sorted_contenders(children: Vec<String>) -> Vec<(u64, String)> {
    let mut line: Vec<(u64, String)> = children
        .into_iter()
        .filter_map(|name| Some((sequence_of(&name)?, name)))
        .collect();
    line.sort_unstable();
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contenders_are_ordered_by_sequence_not_by_uuid() {
        let children = vec![
            "_c_ffff-lock-0000000012".to_owned(),
            "_c_0000-lock-0000000013".to_owned(),
            "_c_aaaa-lock-0000000002".to_owned(),
            "not-a-lock".to_owned(),
        ];
        let line: Vec<u64> = sorted_contenders(children)
            .into_iter()
            .map(|(s, _)| s)
            .collect();
        assert_eq!(line, vec![2, 12, 13]);
    }
}
