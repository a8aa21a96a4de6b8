//! "Did you mean": the nearest of a few known names to one a user typed, for every front end's
//! unknown setting, flag and preset alike.

/// The name of `known` nearest to `typed`, when it is near enough to be what was meant: names
/// compared without case, `_` and `-` (so `workerID`, `worker_id` and `--worker-id` are all near
/// `workerId`), then by edit distance, at most 2 edits (a quarter of a longer name).
///
/// # Example
/// ```
/// use rimeflake::frontend::nearest;
///
/// assert_eq!(nearest("Twitter", &["default", "twitter"]), Some("twitter"));
/// assert_eq!(nearest("stateDirectory", &["stateDir", "layout"]), None);
/// ```
pub fn nearest<'a>(typed: &str, known: &[&'a str]) -> Option<&'a str> {
    let fold = |s: &str| s.replace(['_', '-'], "").to_lowercase();
    let typed = fold(typed);
    known
        .iter()
        .map(|k| (edit_distance(&typed, &fold(k)), *k))
        .min_by_key(|(d, _)| *d)
        .filter(|(d, k)| *d <= 2.max(k.len() / 4))
        .map(|(_, k)| k)
}

/// Levenshtein distance, by characters.
///
/// # Example
/// ```
/// assert_eq!(rimeflake::frontend::edit_distance("layuot", "layout"), 2);
/// ```
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_separators_and_typos_are_near() {
        let known = ["workerId", "maxWaitMs", "stateDir"];
        assert_eq!(nearest("workerID", &known), Some("workerId"));
        assert_eq!(nearest("worker_id", &known), Some("workerId"));
        assert_eq!(nearest("maxWait", &known), Some("maxWaitMs"));
        assert_eq!(nearest("statedir", &known), Some("stateDir"));
        assert_eq!(nearest("foo", &known), None);
        assert_eq!(nearest("x", &[]), None);
    }

    #[test]
    fn distances() {
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
