//! `rimeflake gen`: IDs, one a line, as fast as the generator and stdout allow.

use crate::args::{Format, GenArgs};
use crate::fail::Failure;
use crate::show::write_parts_json;
use crate::signals;
use rimeflake::{format, Encoding, Generator};
use std::io::{BufWriter, Write};

/// IDs are taken with `fill` in chunks of this many: one atomic step per chunk.
const CHUNK: usize = 4096;

pub fn run(args: &GenArgs) -> Result<(), Failure> {
    signals::install();
    let generator = args.generator.build_or_die_by_signal()?;
    let written = write_ids(&generator, args.count, args.format);
    // Close even after a closed pipe or a signal: the lease is released and the state stored as
    // closed, and an in-memory generator waits here until the clock has passed its last ID, so
    // an immediate rerun cannot repeat one.
    let closed = generator.close();
    if let Some(sig) = signals::caught() {
        match closed {
            Ok(()) => signals::die_by(sig),
            Err(e) => signals::fail_by(e.into(), sig),
        }
    }
    written?;
    closed?;
    Ok(())
}

/// Writes `count` IDs; a signal stops it after the last whole chunk, written out.
fn write_ids(generator: &Generator, count: u64, fmt: Format) -> Result<(), Failure> {
    let mut out = BufWriter::with_capacity(64 * 1024, signals::Stdout::new());
    let layout = generator.layout().clone();
    let mut buf = vec![0u64; CHUNK];
    let mut left = count;
    while left > 0 && !signals::interrupted() {
        let n = left.min(CHUNK as u64) as usize;
        let ids = &mut buf[..n];
        generator.fill_with(ids, &mut signals::interrupted)?;
        for &id in ids.iter() {
            match fmt {
                Format::Dec => writeln!(out, "{id}")?,
                Format::Hex => writeln!(out, "{}", format(id, Encoding::Hex))?,
                Format::Base62 => writeln!(out, "{}", format(id, Encoding::Base62))?,
                Format::Base32 => writeln!(out, "{}", format(id, Encoding::Base32))?,
                Format::Json => {
                    write_parts_json(&mut out, id, &layout.decode(id)?)?;
                    out.write_all(b"}\n")?;
                }
            }
        }
        left -= n as u64;
    }
    out.flush()?;
    Ok(())
}
