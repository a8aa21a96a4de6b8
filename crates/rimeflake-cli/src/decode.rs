//! `rimeflake decode`: the parts of IDs given as arguments or on stdin.

use crate::args::DecodeArgs;
use crate::fail::Failure;
use crate::show::{describe_layout, write_parts_json};
use rimeflake::utc::iso8601;
use rimeflake::{parse, Encoding, Layout};
use std::io::{self, BufRead, BufWriter, IsTerminal, Write};

pub fn run(args: &DecodeArgs) -> Result<(), Failure> {
    let layout = args.layout.layout()?;
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
}

/// Beside a time that no generator of the layout can have made yet.
const IN_THE_FUTURE: &str = "(in the future: another layout?)";

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
        let decoded = parse(text, self.encoding).and_then(|id| Ok((id, self.layout.decode(id)?)));
        let (id, parts) = match decoded {
            Ok(d) => d,
            Err(e) => {
                self.out.flush()?;
                return Err(e.into());
            }
        };
        let future = parts.is_well_in_the_future();
        self.header()?;
        if self.json {
            write_parts_json(&mut self.out, id, &parts)?;
            writeln!(
                self.out,
                ",\"in_the_future\":{future},\"layout\":\"{}\",\"spec\":\"{}\",\"expires_at\":\"{}\",\"expires_at_ms\":{}}}",
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
                write!(self.out, "  {IN_THE_FUTURE}")?;
            }
            writeln!(self.out)?;
        }
        Ok(())
    }
}
