//! Small text helpers: the query string, percent-decoding, JSON strings, constant-time compare.

/// The value of `name` in a query string (`a=1&b=2`), percent-decoded; `Err` with a reason when
/// it is not valid UTF-8 after decoding.
pub fn query_value(query: Option<&str>, name: &str) -> Result<Option<String>, String> {
    let Some(query) = query else { return Ok(None) };
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if decode_query(key).as_deref() == Ok(name) {
            return decode_query(value).map(Some);
        }
    }
    Ok(None)
}

/// A query's name or value: `%XX` escapes decoded, and `+`, which is a space there.
fn decode_query(text: &str) -> Result<String, String> {
    decode(text, true)
}

/// A path segment: `%XX` escapes decoded; `+` is itself in a path (a Leaf key `a+b` stays so).
pub fn percent_decode(text: &str) -> Result<String, String> {
    decode(text, false)
}

fn decode(text: &str, plus_is_space: bool) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| "a bad %-escape in the URL".to_string())?;
                out.push(hex);
                i += 3;
            }
            b'+' if plus_is_space => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| "the URL is not UTF-8 once decoded".to_string())
}

/// `text` as a JSON string, quotes included.
pub fn json_string(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}

/// `text` with what a Prometheus label value escapes (`\`, `"`, a line break) escaped.
pub fn label_value(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Whether `a` and `b` are equal, in a time that depends on their lengths only, not on where
/// they first differ.
pub fn same_secret(a: &[u8], b: &[u8]) -> bool {
    let mut diff = (a.len() ^ b.len()) as u64;
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= u64::from(x ^ y);
    }
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_decode() {
        let q = Some("n=3&layout=baidu%2Cepoch%3D2025-01-01T00%3A00%3A00Z&x");
        assert_eq!(query_value(q, "n").unwrap().as_deref(), Some("3"));
        assert_eq!(
            query_value(q, "layout").unwrap().as_deref(),
            Some("baidu,epoch=2025-01-01T00:00:00Z")
        );
        assert_eq!(query_value(q, "x").unwrap().as_deref(), Some(""));
        assert_eq!(query_value(q, "y").unwrap(), None);
        assert!(query_value(Some("n=%zz"), "n").is_err());
        assert!(query_value(Some("n=%ff"), "n").is_err());
        assert_eq!(
            query_value(Some("k=a+b"), "k").unwrap().as_deref(),
            Some("a b")
        );
        assert_eq!(percent_decode("a+b%2Bc").unwrap(), "a+b+c");
    }

    #[test]
    fn secrets_compare() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abc", b"abd"));
        assert!(!same_secret(b"abc", b"abcd"));
        assert!(!same_secret(b"", b"a"));
        assert!(same_secret(b"", b""));
    }

    #[test]
    fn label_values_escape() {
        assert_eq!(label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
