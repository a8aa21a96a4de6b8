//! `rimeflake decode`: the parts of IDs given as arguments or on stdin.

use crate::args::DecodeArgs;
use crate::fail::Failure;
use crate::show::{describe_layout, write_parts_json};
use rimeflake::frontend::iso8601;
use rimeflake::{parse, Encoding, Frontend, Layout};
use std::io::{self, BufRead, BufWriter, IsTerminal, Write};

pub fn run(args: &DecodeArgs) -> Result<(), Failure> {
    let layout = args.layout.layout()?;
    // Neither --layout nor $RIMEFLAKE_LAYOUT: the default is an assumption, said when it shows.
    let assumed = rimeflake::frontend::layout_if_given(args.layout.layout.as_deref())?.is_none();
    let from_stdin = args.ids.is_empty() || args.ids.iter().any(|id| id == "-");
    if args.ids.is_empty() && io::stdin().is_terminal() {
        return Err(Failure::usage(
            "decode needs IDs: as arguments, or piped to stdin (rimeflake gen | rimeflake decode)",
        ));
    }
    let stdout = io::stdout();
    let mut printer = Printer {
        out: BufWriter::new(stdout.lock()),
        layout: &layout,
        encoding: args.format.encoding(),
        json: args.json,
        header_done: false,
        assumed,
        noted: false,
    };
    for text in args.ids.iter().filter(|id| *id != "-") {
        printer.id(text)?;
    }
    if from_stdin {
        for line in io::stdin().lock().lines() {
            for text in line?.split_whitespace() {
                printer.id(text)?;
            }
        }
    }
    printer.out.flush()?;
    Ok(())
}

struct Printer<'a, W: Write> {
    out: W,
    layout: &'a Layout,
    encoding: Encoding,
    json: bool,
    header_done: bool,
    /// The layout is the default because none was given.
    assumed: bool,
    /// The note about the assumed layout was printed.
    noted: bool,
}

/// Beside a time that no generator of the layout can have made yet: the presets that read the
/// ID as a time already past, if any.
fn in_the_future(plausible: &[&str]) -> String {
    if plausible.is_empty() {
        "(in the future: another layout?)".to_string()
    } else {
        format!("(in the future: --layout {}?)", plausible.join(" or "))
    }
}

impl<W: Write> Printer<'_, W> {
    /// The layout line and column names, before the first row of a table.
    fn header(&mut self) -> Result<(), Failure> {
        if !self.json && !self.header_done {
            self.header_done = true;
            writeln!(self.out, "# {}", describe_layout(self.layout))?;
            write!(
                self.out,
                "{:<20} {:>8} {:<24} ",
                "ID", "CLOCK_ID", "TIME (UTC)"
            )?;
            if self.layout.datacenter_bits() > 0 {
                write!(self.out, "{:>10} ", "DATACENTER")?;
            }
            writeln!(self.out, "{:>8} {:>8}", "WORKER", "SEQUENCE")?;
        }
        Ok(())
    }

    /// Decodes and prints one ID; an invalid one ends the command (after flushing those before).
    fn id(&mut self, text: &str) -> Result<(), Failure> {
        let decoded = read(text, self.encoding).and_then(|id| Ok((id, self.layout.decode(id)?)));
        let (id, parts) = match decoded {
            Ok(d) => d,
            Err(e) => {
                self.out.flush()?;
                return Err(e);
            }
        };
        let future = parts.is_well_in_the_future();
        let plausible = if future {
            rimeflake::Layout::plausible_presets_now(id)
        } else {
            Vec::new()
        };
        if self.assumed && !self.noted {
            if let Some(w) = rimeflake::frontend::assumed_layout_warning(id, &parts, Frontend::Cli)
            {
                self.noted = true;
                self.out.flush()?;
                eprintln!("rimeflake: note: {}", w.message());
            }
        }
        self.header()?;
        if self.json {
            write_parts_json(&mut self.out, id, &parts)?;
            writeln!(
                self.out,
                ",\"in_the_future\":{future},{}\"layout\":\"{}\",\"spec\":\"{}\",\"expires_at\":\"{}\",\"expires_at_ms\":{}}}",
                plausible_json(future, &plausible),
                self.layout.name(),
                self.layout.describe(),
                iso8601(self.layout.expires_at_ms()),
                self.layout.expires_at_ms()
            )?;
        } else {
            write!(
                self.out,
                "{:<20} {:>8} {:<24} ",
                text,
                parts.clock_id,
                iso8601(parts.timestamp_ms)
            )?;
            if let Some(dc) = parts.datacenter_id {
                write!(self.out, "{dc:>10} ")?;
            }
            write!(self.out, "{:>8} {:>8}", parts.worker_id, parts.sequence)?;
            if future {
                write!(self.out, "  {}", in_the_future(&plausible))?;
            }
            writeln!(self.out)?;
        }
        Ok(())
    }
}

/// `"plausible_presets":[..],` for an ID in the future; nothing otherwise.
fn plausible_json(future: bool, plausible: &[&str]) -> String {
    if !future {
        return String::new();
    }
    let names: Vec<String> = plausible.iter().map(|p| format!("\"{p}\"")).collect();
    format!("\"plausible_presets\":[{}],", names.join(","))
}

/// The ID `text` encodes: in `encoding`, or a `0x` hex number (1 to 16 digits) when decimal or
/// hex is expected. When it does not parse, the error says which `--format` it would parse as.
fn read(text: &str, encoding: Encoding) -> Result<u64, Failure> {
    if matches!(encoding, Encoding::Decimal | Encoding::Hex) {
        if let Some(digits) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
            if (1..=16).contains(&digits.len()) {
                // Named by its place in the token as given, not in the zero-padded form.
                if let Some((i, c)) = digits.char_indices().find(|(_, c)| !c.is_ascii_hexdigit()) {
                    return Err(Failure::runtime(format!(
                        "\"{text}\" is not a 0x hex ID: {c:?} at position {}",
                        i + 2
                    )));
                }
                return Ok(parse(&format!("{digits:0>16}"), Encoding::Hex)?);
            }
        }
    }
    parse(text, encoding).map_err(|e| {
        let fits: Vec<String> = [
            Encoding::Decimal,
            Encoding::Hex,
            Encoding::Base62,
            Encoding::Base32,
        ]
        .into_iter()
        .filter(|&other| other != encoding && parse(text, other).is_ok())
        .map(|other| format!("--format {}", other.name()))
        .collect();
        let mut failure = Failure::from(e);
        if let Failure::Error { message, .. } = &mut failure {
            if !fits.is_empty() {
                message.push_str(&format!("; it reads as {}", fits.join(" or ")));
            }
        }
        failure
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(f: Failure) -> String {
        match f {
            Failure::Error { message, .. } => message,
            Failure::ClosedPipe => panic!("not an error"),
        }
    }

    #[test]
    fn hex_with_0x_reads_as_hex() {
        assert_eq!(read("0x1d", Encoding::Decimal).unwrap(), 0x1d);
        assert_eq!(read("0X00000000000000ff", Encoding::Hex).unwrap(), 0xff);
        assert!(read("0x", Encoding::Decimal).is_err());
        assert_eq!(
            message(read("0x1zz", Encoding::Decimal).unwrap_err()),
            "\"0x1zz\" is not a 0x hex ID: 'z' at position 3"
        );
        assert!(read("0x1d", Encoding::Base62).is_err());
    }

    #[test]
    fn a_token_that_fails_names_the_formats_it_fits() {
        let m = message(read("1d80a5f0c4000000", Encoding::Decimal).unwrap_err());
        assert!(m.ends_with("; it reads as --format hex"), "{m}");
        let m = message(read("0CjQ9YkB2aq", Encoding::Decimal).unwrap_err());
        assert!(m.ends_with("; it reads as --format base62"), "{m}");
        let m = message(read("!!", Encoding::Decimal).unwrap_err());
        assert!(!m.contains("it reads as"), "{m}");
    }
}
