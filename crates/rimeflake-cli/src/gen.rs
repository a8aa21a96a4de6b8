//! `rimeflake gen`: IDs, one a line, as fast as the generator and stdout allow.

use crate::args::{Format, GenArgs};
use crate::fail::Failure;
use crate::show::write_parts_json;
use rimeflake::{format, Encoding, Generator};
use std::io::{self, BufWriter, Write};

/// IDs are taken with `fill` in chunks of this many: one atomic step per chunk.
const CHUNK: usize = 4096;

pub fn run(args: &GenArgs) -> Result<(), Failure> {
    let generator = args.generator.build()?;
    let written = write_ids(&generator, args.count, args.format);
    // Close even after a closed pipe: an in-memory generator waits here until the clock has
    // passed its last ID, so an immediate rerun cannot repeat one.
    let closed = generator.close();
    written?;
    closed?;
    Ok(())
}

fn write_ids(generator: &Generator, count: u64, fmt: Format) -> Result<(), Failure> {
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(64 * 1024, stdout.lock());
    let layout = generator.layout().clone();
    let mut buf = vec![0u64; CHUNK];
    let mut left = count;
    while left > 0 {
        let n = left.min(CHUNK as u64) as usize;
        let ids = &mut buf[..n];
        generator.fill(ids)?;
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
