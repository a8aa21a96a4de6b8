//! rimeflake from Rust: make a generator, take IDs one at a time and in batches, and read them
//! back. Run it with `cargo run --manifest-path examples/rust/Cargo.toml` from the repository.

use rimeflake::{format, parse, Encoding, Generator, Layout};
use std::sync::Arc;

fn main() -> Result<(), rimeflake::Error> {
    // The embedded default: the lowest free worker ID of the state directory
    // ($RIMEFLAKE_STATE_DIR, else ~/.local/state/rimeflake) is leased, and the generator keeps
    // its reservations there, so a restart (even with the clock set back) cannot repeat an ID.
    // A namespace of its own keeps this example apart from other users of the directory.
    let generator = Generator::builder()
        .layout(Layout::default())
        .namespace("example")
        .build()?;
    println!("worker:   {} (leased)", generator.worker_id());

    // One ID at a time: strictly increasing.
    let a = generator.next_id()?;
    let b = generator.next_id()?;
    assert!(a < b);
    println!("next_id:  {a}, {b}");

    // Many at once: `fill` reserves a whole range with one atomic step.
    let mut batch = [0u64; 1000];
    generator.fill(&mut batch)?;
    assert!(batch.windows(2).all(|w| w[0] < w[1]) && b < batch[0]);
    println!(
        "fill:     {} IDs, {} .. {}",
        batch.len(),
        batch[0],
        batch[999]
    );

    // The generator is Send + Sync: threads share it through an Arc.
    let shared = Arc::new(generator);
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let g = Arc::clone(&shared);
            std::thread::spawn(move || g.next_ids(250))
        })
        .collect();
    let mut all: Vec<u64> = Vec::new();
    for t in threads {
        all.extend(t.join().expect("thread")?);
    }
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 1000);
    println!("threads:  4 x 250 IDs, all distinct");

    // Read an ID back: clock-id, Unix ms, worker, sequence.
    let parts = shared.layout().decode(b)?;
    assert_eq!(parts.worker_id, shared.worker_id());
    println!(
        "decode:   {b} -> clock_id {}, timestamp_ms {}, worker_id {}, sequence {}",
        parts.clock_id, parts.timestamp_ms, parts.worker_id, parts.sequence
    );
    println!(
        "expires:  the layout's time field runs out at {} (Unix ms)",
        shared.layout().expires_at_ms()
    );

    // String forms: the fixed-width ones sort as text the way the IDs sort as numbers.
    for enc in [
        Encoding::Decimal,
        Encoding::Hex,
        Encoding::Base62,
        Encoding::Base32,
    ] {
        let text = format(b, enc);
        assert_eq!(parse(&text, enc)?, b);
        if enc != Encoding::Decimal {
            assert!(format(a, enc) < text);
        }
        println!("format:   {:<7} {text}", enc.name());
    }

    // Closing stores the reservation and frees the worker ID for the next process.
    shared.close()?;
    Ok(())
}
