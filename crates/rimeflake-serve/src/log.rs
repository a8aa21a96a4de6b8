//! The service's log on stderr: one line an event, as text for people (`rimeflake: ...`, the
//! CLI's own form) or as one JSON object a line for log collectors (`--log json`).

use std::io::Write;

/// How log lines are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogFormat {
    /// `rimeflake: <message>` (`rimeflake: warning: <message>` for a warning).
    #[default]
    Text,
    /// `{"time":"...","level":"info","event":"...","message":"...",<fields>}`.
    Json,
}

/// A field's value in a JSON line.
#[derive(Clone, Debug)]
pub enum Value {
    Str(String),
    Num(u64),
    Bool(bool),
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Str(s.to_string())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Str(s)
    }
}
impl From<u64> for Value {
    fn from(n: u64) -> Self {
        Value::Num(n)
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

/// Where the service logs, shared by the CLI (the start line, the core's warnings) and the
/// service (stop, lease and clock-id changes).
#[derive(Clone, Copy, Debug, Default)]
pub struct Log {
    pub format: LogFormat,
}

impl Log {
    pub fn new(format: LogFormat) -> Self {
        Log { format }
    }

    /// An event as it happens: `event` names it for collectors, `message` says it in words
    /// (one line), `fields` are its values apart (in JSON only: the message says them too).
    pub fn info(&self, event: &str, message: &str, fields: &[(&str, Value)]) {
        self.write("info", event, message, fields);
    }

    /// Something an operator should look at; the service carries on.
    pub fn warn(&self, event: &str, message: &str, fields: &[(&str, Value)]) {
        self.write("warning", event, message, fields);
    }

    /// The line itself, in this log's format.
    pub fn line(
        &self,
        level: &str,
        event: &str,
        message: &str,
        fields: &[(&str, Value)],
    ) -> String {
        let message = one_line(message);
        match self.format {
            LogFormat::Text if level == "info" => format!("rimeflake: {message}\n"),
            LogFormat::Text => format!("rimeflake: {level}: {message}\n"),
            LogFormat::Json => {
                let mut obj = serde_json::Map::new();
                let now = rimeflake::clock::system_now_ms();
                obj.insert("time".into(), rimeflake::frontend::iso8601(now).into());
                obj.insert("level".into(), level.into());
                obj.insert("event".into(), event.into());
                obj.insert("message".into(), message.into());
                for (k, v) in fields {
                    let v = match v {
                        Value::Str(s) => serde_json::Value::from(s.as_str()),
                        Value::Num(n) => serde_json::Value::from(*n),
                        Value::Bool(b) => serde_json::Value::from(*b),
                    };
                    obj.insert((*k).to_string(), v);
                }
                format!("{}\n", serde_json::Value::Object(obj))
            }
        }
    }

    fn write(&self, level: &str, event: &str, message: &str, fields: &[(&str, Value)]) {
        let line = self.line(level, event, message, fields);
        // One write a line, so that lines of two threads never interleave.
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
}

/// `text` on one line: its lines trimmed and joined with "; ".
pub(crate) fn one_line(text: &str) -> String {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut out = lines.next().unwrap_or("").to_string();
    for l in lines {
        out.push_str("; ");
        out.push_str(l);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_json_lines() {
        let text = Log::new(LogFormat::Text);
        assert_eq!(
            text.line("info", "stop", "stopping\non SIGTERM", &[]),
            "rimeflake: stopping; on SIGTERM\n"
        );
        assert_eq!(
            text.line("warning", "x", "careful", &[]),
            "rimeflake: warning: careful\n"
        );
        let json = Log::new(LogFormat::Json);
        let line = json.line(
            "info",
            "start",
            "serving",
            &[("port", 80u64.into()), ("token", true.into())],
        );
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["event"], "start");
        assert_eq!(v["message"], "serving");
        assert_eq!(v["port"], 80);
        assert_eq!(v["token"], true);
        assert!(v["time"].as_str().unwrap().ends_with('Z'));
    }
}
