//! The presets: named layouts of rimeflake and of the peers whose IDs it reads and writes.

use super::{FieldOrder, Layout};
use crate::error::{Error, Result};

/// 2024-01-01T00:00:00Z, the epoch of the `default` and `js_safe` presets, in Unix ms.
pub const EPOCH_2024: u64 = 1_704_067_200_000;
/// Twitter's epoch (2010-11-04T01:42:54.657Z) in Unix ms.
pub const EPOCH_TWITTER: u64 = 1_288_834_974_657;
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

impl Layout {
    /// The names accepted by [`Layout::preset`] and [`Layout::from_spec`].
    pub const PRESETS: [&'static str; 6] = [
        "default",
        "twitter",
        "sonyflake",
        "sonyflake_v2",
        "baidu",
        "js_safe",
    ];

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
        Ok(Layout::trusted(
            "baidu",
            [0, 28, 22, 13],
            FieldOrder::SequenceBelowWorker,
            1000,
            epoch_ms,
        ))
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

    /// A preset by name: `default`, `twitter`, `sonyflake`, `sonyflake_v2`, `baidu` (with
    /// Baidu's own default epoch: it decodes, but a generator needs a later epoch, such as
    /// `Layout::from_spec("baidu,epoch=2025-01-01T00:00:00Z")`), `js_safe`.
    ///
    /// # Errors
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) for an unknown name.
    pub fn preset(name: &str) -> Result<Self> {
        match name {
            "default" => Ok(Layout::default()),
            "twitter" => Ok(Layout::twitter()),
            "sonyflake" => Ok(Layout::sonyflake()),
            "sonyflake_v2" | "sonyflake-v2" => Ok(Layout::sonyflake_v2()),
            "baidu" => Layout::baidu(EPOCH_BAIDU),
            "js_safe" | "js-safe" => Ok(Layout::js_safe()),
            other => Err(Error::config(format!(
                "layout: unknown preset {other:?}; the presets are {}, or give a layout spec \
                 such as clock_id=0,time=41,worker=10,sequence=12,epoch_ms=1420070400000",
                Layout::PRESETS.join(", ")
            ))),
        }
    }

    /// The preset whose fields `self` has, if any (its name, with `baidu` for any epoch).
    pub(super) fn preset_name_of(&self) -> Option<&'static str> {
        let same = |p: Layout| {
            Layout {
                name: p.name,
                ..self.clone()
            } == p
        };
        let baidu = Layout::trusted(
            "baidu",
            [0, 28, 22, 13],
            FieldOrder::SequenceBelowWorker,
            1000,
            self.epoch_ms,
        );
        [
            Layout::default(),
            Layout::twitter(),
            Layout::sonyflake(),
            Layout::sonyflake_v2(),
            Layout::js_safe(),
            baidu,
        ]
        .into_iter()
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
