//! The presets: named layouts of rimeflake and of the peers whose IDs it reads and writes.

use super::{FieldOrder, Layout};
use crate::error::{Error, Result};

/// 2024-01-01T00:00:00Z, the epoch of the `default` and `js_safe` presets, in Unix ms.
pub const EPOCH_2024: u64 = 1_704_067_200_000;
/// Twitter's epoch (2010-11-04T01:42:54.657Z) in Unix ms.
pub const EPOCH_TWITTER: u64 = 1_288_834_974_657;
/// Discord's epoch, 2015-01-01T00:00:00Z (the first second of 2015), in Unix ms.
pub const EPOCH_DISCORD: u64 = 1_420_070_400_000;
/// Sonyflake's epoch, 2014-09-01T00:00:00Z, in Unix ms.
pub const EPOCH_SONYFLAKE: u64 = 1_409_529_600_000;
/// sony/sonyflake v2's default start time, 2025-01-01T00:00:00Z, in Unix ms.
pub const EPOCH_SONYFLAKE_V2: u64 = 1_735_689_600_000;
/// Baidu uid-generator's own default epoch, 2016-05-20 at midnight in Beijing
/// (2016-05-19T16:00:00Z), in Unix ms. Its 28 bits of seconds ran out on 2024-11-20, so it can
/// only decode old IDs; a generator needs a later epoch.
pub const EPOCH_BAIDU: u64 = 1_463_673_600_000;

impl Default for Layout {
    /// The `default` preset: 3 clock-id, 41 time, 10 worker and 9 sequence bits, 1 ms units,
    /// epoch 2024-01-01T00:00:00Z.
    fn default() -> Self {
        Layout::trusted(
            "default",
            [3, 41, 10, 9],
            FieldOrder::SequenceBelowWorker,
            1,
            EPOCH_2024,
        )
    }
}

/// A preset: a named layout and a line on what it is for. [`Layout::PRESET_LIST`] has them
/// all; the front ends take their names and docs from it (the CLI's help, the typed stubs'
/// `LayoutName`, the docs' table). `#[non_exhaustive]`.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Preset {
    /// Its name, as [`Layout::preset`] and a layout spec take it.
    pub name: &'static str,
    /// Other spellings [`Layout::preset`] takes (`js-safe`).
    pub aliases: &'static [&'static str],
    /// One sentence on what it is.
    pub doc: &'static str,
    make: fn() -> Layout,
    /// Whether the preset's IDs are published, in URLs and API answers, where people find IDs
    /// whose layout they do not know (Twitter's, Discord's): the decode hint ranks such
    /// readings before those of layouts whose IDs stay inside their users' systems
    /// (`layout/guess.rs` says why).
    pub(super) published: bool,
}

impl Preset {
    /// The preset's layout (`baidu` with Baidu's own epoch, which decodes but cannot generate).
    pub fn layout(&self) -> Layout {
        (self.make)()
    }
}

/// The presets, in the order every list of them follows. A new preset is a row here.
const PRESET_LIST: &[Preset] = &[
    Preset {
        name: "default",
        aliases: &[],
        doc: "rimeflake's own, and the only preset with clock-id bits: it rides out a large \
              clock step back without waiting",
        make: Layout::default,
        published: false,
    },
    Preset {
        name: "twitter",
        aliases: &[],
        doc: "Twitter's Snowflake: 5 datacenter and 5 worker bits, Twitter's epoch",
        make: Layout::twitter,
        published: true,
    },
    Preset {
        name: "discord",
        aliases: &[],
        doc: "Discord's snowflakes: Twitter's widths from Discord's epoch; decode shows \
              Discord's internal worker ID as the datacenter part, its process ID as the worker",
        make: Layout::discord,
        published: true,
    },
    Preset {
        name: "sonyflake",
        aliases: &[],
        doc: "sony/sonyflake v1's defaults: 10 ms units, 16 worker bits",
        make: Layout::sonyflake,
        published: false,
    },
    Preset {
        name: "sonyflake_v2",
        aliases: &["sonyflake-v2"],
        doc: "sony/sonyflake v2's defaults: as sonyflake, from 2025",
        make: Layout::sonyflake_v2,
        published: false,
    },
    Preset {
        name: "baidu",
        aliases: &[],
        doc: "Baidu uid-generator's: 1 s units; its own epoch ran out in 2024, so it decodes \
              only (give epoch= to generate)",
        make: || Layout::baidu_at(EPOCH_BAIDU),
        published: false,
    },
    Preset {
        name: "js_safe",
        aliases: &["js-safe"],
        doc: "53 bits, so that an ID is exact as a JavaScript Number",
        make: Layout::js_safe,
        published: false,
    },
];

/// The names of `list`, in its order.
const fn names<const N: usize>(list: &[Preset]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = list[i].name;
        i += 1;
    }
    out
}

impl Layout {
    /// Every preset, with its doc line: the one list of them.
    pub const PRESET_LIST: &'static [Preset] = PRESET_LIST;

    /// The names accepted by [`Layout::preset`] and [`Layout::from_spec`]
    /// ([`Layout::PRESET_LIST`]'s).
    pub const PRESETS: [&'static str; PRESET_LIST.len()] = names(PRESET_LIST);

    /// Twitter's layout: 41 time bits, 10 worker bits (5 datacenter + 5 worker, so
    /// [`Parts::datacenter_id`](super::Parts::datacenter_id) is set), 12 sequence bits, 1 ms
    /// units, Twitter's epoch. No clock-id bits, so large rollbacks wait by default.
    pub fn twitter() -> Self {
        Layout {
            datacenter_bits: 5,
            ..Layout::trusted(
                "twitter",
                [0, 41, 10, 12],
                FieldOrder::SequenceBelowWorker,
                1,
                EPOCH_TWITTER,
            )
        }
    }

    /// Discord's layout, as Discord's developer documentation gives its snowflakes: milliseconds
    /// since Discord's epoch ([`EPOCH_DISCORD`], 2015-01-01) above bit 22, a 5-bit internal
    /// worker ID, a 5-bit internal process ID and a 12-bit increment. Twitter's widths: 41 time
    /// bits (Discord counts 42 with the sign bit, which every layout here keeps 0, so IDs run
    /// until 2084-09-06), 10 worker bits and 12 sequence bits, 1 ms units. The worker field is
    /// split as Discord splits it: its upper 5 bits, Discord's internal worker ID, are the
    /// datacenter part ([`Parts::datacenter_id`](super::Parts::datacenter_id)), and the lower
    /// 5, Discord's internal process ID, are [`Parts::worker_id`](super::Parts::worker_id).
    ///
    /// # Example
    /// ```
    /// use rimeflake::Layout;
    ///
    /// // Discord's documentation's example: worker 1, process 0, increment 7, 2016-04-30.
    /// let parts = Layout::discord().decode(175_928_847_299_117_063)?;
    /// assert_eq!(parts.timestamp_ms, 1_462_015_105_796);
    /// assert_eq!((parts.datacenter_id, parts.worker_id, parts.sequence), (Some(1), 0, 7));
    /// # Ok::<(), rimeflake::Error>(())
    /// ```
    pub fn discord() -> Self {
        Layout {
            datacenter_bits: 5,
            ..Layout::trusted(
                "discord",
                [0, 41, 10, 12],
                FieldOrder::SequenceBelowWorker,
                1,
                EPOCH_DISCORD,
            )
        }
    }

    /// Sonyflake's layout: 39 time bits in 10 ms units, 8 sequence bits above 16 worker bits,
    /// epoch 2014-09-01 (sony/sonyflake v1's default start time).
    ///
    /// When a unit's 256 sequence numbers run out, a generator borrows the next unit, as
    /// sony/sonyflake does; rimeflake lets IDs run at most `max_drift` ahead of the clock that
    /// way (then waits), while sony sleeps until the clock reaches the borrowed unit. So
    /// `max_drift` 0 gives sony's exact behaviour: no ID ever ahead of the clock.
    pub fn sonyflake() -> Self {
        Layout::trusted(
            "sonyflake",
            [0, 39, 16, 8],
            FieldOrder::SequenceAboveWorker,
            10,
            EPOCH_SONYFLAKE,
        )
    }

    /// sony/sonyflake v2's default layout: as [`Layout::sonyflake`], with v2's default start
    /// time 2025-01-01T00:00:00Z.
    pub fn sonyflake_v2() -> Self {
        Layout::trusted(
            "sonyflake_v2",
            [0, 39, 16, 8],
            FieldOrder::SequenceAboveWorker,
            10,
            EPOCH_SONYFLAKE_V2,
        )
    }

    /// Baidu uid-generator's layout: 28 time bits in seconds, 22 worker bits, 13 sequence bits,
    /// from `epoch_ms`.
    ///
    /// Baidu's own default epoch, [`EPOCH_BAIDU`] (2016-05-20 in Beijing), ran out in November
    /// 2024, since 2^28 seconds is 8.5 years: a layout with it decodes old IDs, but building a
    /// generator on it fails. Give a recent epoch to generate.
    ///
    /// # Errors
    /// None today (kept a `Result` so that a check of the epoch's arithmetic can be added).
    pub fn baidu(epoch_ms: u64) -> Result<Self> {
        Ok(Layout::baidu_at(epoch_ms))
    }

    fn baidu_at(epoch_ms: u64) -> Self {
        Layout::trusted(
            "baidu",
            [0, 28, 22, 13],
            FieldOrder::SequenceBelowWorker,
            1000,
            epoch_ms,
        )
    }

    /// A layout whose IDs fit in 53 bits, exact as a JavaScript `Number`: 41 time bits, 3 worker
    /// bits, 9 sequence bits, 1 ms units, epoch 2024-01-01.
    pub fn js_safe() -> Self {
        Layout::trusted(
            "js_safe",
            [0, 41, 3, 9],
            FieldOrder::SequenceBelowWorker,
            1,
            EPOCH_2024,
        )
    }

    /// A preset by name (or an alias) of [`Layout::PRESET_LIST`]; `baidu` has Baidu's own
    /// default epoch: it decodes, but a generator needs a later epoch, such as
    /// `Layout::from_spec("baidu,epoch=2025-01-01T00:00:00Z")`.
    ///
    /// # Errors
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) for an unknown name, with the nearest
    /// preset when one is near (`Twitter`: did you mean `twitter`?).
    pub fn preset(name: &str) -> Result<Self> {
        if let Some(p) = PRESET_LIST
            .iter()
            .find(|p| p.name == name || p.aliases.contains(&name))
        {
            return Ok(p.layout());
        }
        let near = crate::contract::nearest(name, &Layout::PRESETS)
            .map(|p| format!(" did you mean {p:?}?"))
            .unwrap_or_default();
        Err(Error::config(format!(
            "layout: unknown preset {name:?};{near} the presets are {}, or give a layout spec \
             such as clock_id=0,time=41,worker=10,sequence=12,epoch_ms=1420070400000",
            Layout::PRESETS.join(", ")
        )))
    }

    /// The preset whose fields `self` has, if any (its name, with `baidu` for any epoch).
    pub(super) fn preset_name_of(&self) -> Option<&'static str> {
        let same = |p: Layout| {
            Layout {
                name: p.name,
                ..self.clone()
            } == p
        };
        // `baidu` is every epoch's: compare with the one of this layout.
        PRESET_LIST
            .iter()
            .map(|p| match p.name {
                "baidu" => Layout::baidu_at(self.epoch_ms),
                _ => p.layout(),
            })
            .find(|p| same(p.clone()))
            .map(|p| p.name)
    }

    /// The namespace a generator of this layout uses unless told otherwise: the preset's name
    /// (`default`, `twitter`, ...), or for any other layout its name and fingerprint
    /// (`custom-<16 hex digits>`; `baidu-<16 hex digits>`, since Baidu layouts differ by epoch).
    /// A namespace keeps one layout, so generators of different layouts on one state directory
    /// never share or refuse each other's namespace.
    pub fn default_namespace(&self) -> String {
        match self.name {
            "custom" | "baidu" => format!("{}-{:016x}", self.name, self.fingerprint()),
            preset => preset.to_string(),
        }
    }
}
