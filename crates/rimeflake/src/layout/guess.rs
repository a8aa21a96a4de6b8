//! Which presets likeliest made an ID, for a decoder that had to assume a layout and got a time
//! no generator can have made yet: the decode hint of every front end, defined here once.
//!
//! **Plausible**, precisely. A preset's *reading* of an ID is the time its layout decodes
//! (`baidu` with Baidu's own epoch).
//!
//! 1. A reading is *possible* when the ID fits the layout's bits and the time lies no later
//!    than a day past the clock ([`Parts::FUTURE_SLACK_MS`]); it never lies before the epoch,
//!    which the time field counts from. An impossible reading is never proposed.
//! 2. Possible readings fall in three tiers, each more plausible than the next:
//!    - *recent*: the time lies within [`RECENT_MS`] (a week) before the clock, or in the day
//!      of slack after it. An ID decoded soon after it was made reads as "just now" with its
//!      own layout, and with another only by chance: its readings spread over years, eight
//!      days of which are this window;
//!    - *published*: the preset's IDs are published, in URLs and API answers (`twitter`,
//!      `discord`: the row's `published`). An ID whose reader does not know its layout was
//!      most likely found there, since whoever makes IDs with rimeflake, Sonyflake or Baidu's
//!      generator has its configuration at hand;
//!    - *possible*: any other possible reading.
//! 3. Within a tier, readings are as plausible as each other, the latest first (the IDs people
//!    decode are mostly recent ones).
//!
//! The hint proposes the readings of the best tier that has any, and only those: it never
//! proposes a reading less plausible than one it leaves out.
//!
//! The fields below the time do not rank readings, since the bits cannot tell: Discord's
//! documentation's example, 175928847299117063, reads as worker 1, process 0, increment 7 with
//! `discord` (2016-04-30), as machine 7, sequence 2 with `sonyflake` (2017-12-27), small
//! numbers either way; and `twitter` and `discord` differ only by their epochs, so every ID
//! reads under both, 4.16 years apart.

use super::{Layout, Parts};
use crate::contract::Frontend;
use crate::warning::Warning;

/// How long before the clock a reading still counts as recent: a week.
pub const RECENT_MS: u64 = 7 * 86_400_000;

/// How plausible a possible reading is: the first variant the most (the module's tiers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Tier {
    Recent,
    Published,
    Possible,
}

impl Layout {
    /// The presets whose readings of `id` are the most plausible at `now_ms`, the Unix time in
    /// milliseconds: all of the best tier of `layout/guess.rs`'s definition (recent, then
    /// published, then any possible reading), the latest reading first. Empty when no preset
    /// reads `id` as a time before a day past `now_ms`.
    ///
    /// A decoder that assumed a layout (the `default`, when none was given) and got a time
    /// well in the future names these: a `twitter` ID read as `default` lies in 2082.
    ///
    /// # Example
    /// ```
    /// use rimeflake::{Layout, Parts};
    ///
    /// let now_ms = 1_795_000_000_000; // 2026-11-18
    /// let parts = Parts { clock_id: 0, timestamp_ms: now_ms, datacenter_id: Some(1), worker_id: 2, sequence: 3 };
    /// let id = Layout::twitter().compose(&parts)?;
    /// assert_eq!(Layout::plausible_presets(id, now_ms), ["twitter"]);
    /// // Discord's documentation's example: a published preset's reading beats Sonyflake's.
    /// assert_eq!(Layout::plausible_presets(175_928_847_299_117_063, now_ms), ["discord", "twitter"]);
    /// # Ok::<(), rimeflake::Error>(())
    /// ```
    pub fn plausible_presets(id: u64, now_ms: u64) -> Vec<&'static str> {
        plausible_readings(id, now_ms)
            .into_iter()
            .map(|(name, _)| name)
            .collect()
    }

    /// [`Layout::plausible_presets`] against the system clock.
    pub fn plausible_presets_now(id: u64) -> Vec<&'static str> {
        Layout::plausible_presets(id, crate::clock::system_now_ms())
    }
}

/// The most plausible readings of `id` at `now_ms`: each preset's name and the Unix ms it
/// reads, the latest first ([`Layout::plausible_presets`]).
pub(crate) fn plausible_readings(id: u64, now_ms: u64) -> Vec<(&'static str, u64)> {
    let latest = now_ms.saturating_add(Parts::FUTURE_SLACK_MS);
    let recent = now_ms.saturating_sub(RECENT_MS);
    let mut readings: Vec<(Tier, u64, &'static str)> = Layout::PRESET_LIST
        .iter()
        .filter_map(|preset| {
            let at = preset.layout().decode(id).ok()?.timestamp_ms;
            let tier = match at {
                _ if at > latest => return None,
                _ if at >= recent => Tier::Recent,
                _ if preset.published => Tier::Published,
                _ => Tier::Possible,
            };
            Some((tier, at, preset.name))
        })
        .collect();
    // The best tier first, the latest reading first within it; stable, so equal times keep
    // the presets' order.
    readings.sort_by_key(|&(tier, at, _)| (tier, std::cmp::Reverse(at)));
    let best = readings.first().map(|r| r.0);
    readings
        .into_iter()
        .take_while(|r| Some(r.0) == best)
        .map(|(_, at, name)| (name, at))
        .collect()
}

/// What a decoder says when it read `id` with the default layout because its user named none,
/// and the time it read (`parts`) lies well in the future ([`Parts::is_well_in_the_future`]):
/// a warning of kind [`Warning::ASSUMED_LAYOUT`] that says so and names the most plausible
/// presets ([`Layout::plausible_presets`]) with the time each reads, in `frontend`'s words.
/// `None` for a time that is not in the future.
///
/// # Example
/// ```
/// use rimeflake::frontend::assumed_layout_warning;
/// use rimeflake::{Frontend, Layout};
///
/// let id = 2_125_930_713_407_557_632; // made with `twitter` on 2026-11-26
/// let parts = Layout::default().decode(id)?;
/// let warning = assumed_layout_warning(id, &parts, Frontend::Python).expect("2082 is in the future");
/// assert!(warning.message().ends_with("try layout='twitter'"), "{warning}");
/// # Ok::<(), rimeflake::Error>(())
/// ```
pub fn assumed_layout_warning(id: u64, parts: &Parts, frontend: Frontend) -> Option<Warning> {
    if !parts.is_well_in_the_future() {
        return None;
    }
    let none_given = match frontend {
        Frontend::Cli => "neither --layout nor RIMEFLAKE_LAYOUT was given",
        _ => "no layout was given",
    };
    let give = |preset: &str| match frontend {
        Frontend::Cli => format!("--layout {preset}"),
        Frontend::Python => format!("layout='{preset}'"),
        Frontend::Node => format!("layout '{preset}'"),
        Frontend::C => format!("layout \"{preset}\""),
        _ => format!("Layout::preset(\"{preset}\")"),
    };
    let read = format!(
        "{id} was read with the default layout, as {none_given}: by it, the ID was made at {}, \
         in the future",
        crate::utc::iso8601(parts.timestamp_ms)
    );
    let plausible = plausible_readings(id, crate::clock::system_now_ms());
    let reading = |(name, at): &(&str, u64)| format!("{name} {}", crate::utc::iso8601(*at));
    let message = match plausible.as_slice() {
        [] => {
            format!("{read}; no preset reads it as a past time: give the layout it was made with")
        }
        [one] => format!(
            "{read}; the likeliest reading is the {} preset's, {}: try {}",
            one.0,
            crate::utc::iso8601(one.1),
            give(one.0)
        ),
        many => format!(
            "{read}; the likeliest readings, as likely as each other, are {}: try {}",
            many.iter().map(reading).collect::<Vec<_>>().join(", "),
            give(many[0].0)
        ),
    };
    Some(Warning::new(Warning::ASSUMED_LAYOUT, message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::EPOCH_SONYFLAKE;

    /// 2026-11-26T00:00:00Z.
    const NOW: u64 = 1_795_651_200_000;

    fn made_by(layout: &Layout, at_ms: u64) -> u64 {
        let parts = Parts {
            clock_id: 0,
            timestamp_ms: at_ms,
            datacenter_id: None,
            worker_id: 1,
            sequence: 1,
        };
        layout.compose(&parts).unwrap()
    }

    #[test]
    fn a_twitter_id_is_plausible_as_twitter_not_as_default() {
        let id = made_by(&Layout::twitter(), NOW - 1000);
        assert!(Layout::default().decode(id).unwrap().timestamp_ms > NOW + Parts::FUTURE_SLACK_MS);
        let presets = Layout::plausible_presets(id, NOW);
        assert_eq!(presets.first(), Some(&"twitter"), "{presets:?}");
        assert!(!presets.contains(&"default"), "{presets:?}");
        assert!(!presets.contains(&"sonyflake"), "{presets:?}");
        // 63 bits do not fit js_safe's 53.
        assert!(!presets.contains(&"js_safe"), "{presets:?}");
    }

    #[test]
    fn a_sonyflake_id_is_plausible_as_sonyflake() {
        let id = made_by(&Layout::sonyflake(), NOW);
        let presets = Layout::plausible_presets(id, NOW);
        assert_eq!(presets.first(), Some(&"sonyflake"), "{presets:?}");
        assert!(!presets.contains(&"default"), "{presets:?}");
    }

    /// Discord's developer documentation's example snowflake (the "Snowflakes" section of its
    /// API reference, discord.com/developers/docs/reference#snowflakes): worker 1, process 0,
    /// increment 7, made 2016-04-30T11:18:25.796Z.
    const DISCORD_DOCS_ID: u64 = 175_928_847_299_117_063;
    /// The Tweet of Twitter's API v2 documentation's examples (the Tweet object of its data
    /// dictionary, developer.twitter.com/en/docs/twitter-api/data-dictionary/object-model/tweet),
    /// whose `created_at` the documentation gives as 2019-12-31T19:26:16.000Z.
    const TWITTER_DOCS_ID: u64 = 1_212_092_628_029_698_048;

    #[test]
    fn discords_example_reads_2016_as_discord_and_is_not_offered_to_sonyflake() {
        let readings = plausible_readings(DISCORD_DOCS_ID, NOW);
        // Published, as likely as each other, the latest first: Discord's reading is 2016.
        assert_eq!(
            readings,
            [
                ("discord", 1_462_015_105_796),
                ("twitter", 1_330_779_680_453)
            ]
        );
        let parts = Layout::discord().decode(DISCORD_DOCS_ID).unwrap();
        assert_eq!(
            (parts.datacenter_id, parts.worker_id, parts.sequence),
            (Some(1), 0, 7)
        );
        // Sonyflake (2017-12-27) and Baidu (2016-07-17) read it as a past time too, less
        // plausibly: their presets' IDs are not published.
        for (name, at) in [
            ("sonyflake", 1_514_391_364_490),
            ("baidu", 1_468_793_803_000),
        ] {
            assert_eq!(
                Layout::preset(name)
                    .unwrap()
                    .decode(DISCORD_DOCS_ID)
                    .unwrap()
                    .timestamp_ms,
                at
            );
        }
    }

    #[test]
    fn twitters_example_reads_its_created_at_as_twitter() {
        let readings = plausible_readings(TWITTER_DOCS_ID, NOW);
        // 2019-12-31T19:26:16.771Z: the documented created_at, to the second. Discord's epoch
        // reads the same bits 4.16 years later, in 2024: the bits cannot tell them apart.
        assert_eq!(
            readings,
            [
                ("discord", 1_709_055_802_114),
                ("twitter", 1_577_820_376_771)
            ]
        );
        // Once Discord's reading is in the future (a Tweet of 2023), only Twitter's is left.
        let tweet_2023 = made_by(&Layout::twitter(), 1_688_169_600_000);
        assert_eq!(Layout::plausible_presets(tweet_2023, NOW), ["twitter"]);
    }

    /// A Sonyflake ID as sony/sonyflake makes it: 10 ms units since 2014-09-01, 8 sequence bits
    /// above 16 bits of machine ID, which by default is the low 16 bits of the host's private
    /// IPv4 address (10.0.1.23 here). sony/sonyflake's README shows no ID to cite.
    fn sonyflake_id(at_ms: u64, sequence: u64) -> u64 {
        let units = (at_ms - EPOCH_SONYFLAKE) / 10;
        (units << 24) | (sequence << 16) | (1 << 8 | 23)
    }

    #[test]
    fn a_recent_reading_beats_a_published_one() {
        // Made an hour ago: Sonyflake's reading is recent, Discord's and Twitter's (2019 and
        // 2015) are not.
        let id = sonyflake_id(NOW - 3_600_000, 0);
        assert_eq!(Layout::plausible_presets(id, NOW), ["sonyflake"]);
        let old = Layout::discord().decode(id).unwrap().timestamp_ms;
        assert!(old < NOW - 5 * 365 * 86_400_000, "{old}");
        // A week is the window: made eight days ago, the published presets' readings win.
        // Whoever decodes their own old IDs gives the layout.
        let id = sonyflake_id(NOW - RECENT_MS - 86_400_000, 0);
        assert_eq!(Layout::plausible_presets(id, NOW), ["discord", "twitter"]);
    }

    #[test]
    fn readings_of_one_tier_come_latest_first_and_no_other_tier_joins_them() {
        for id in [
            DISCORD_DOCS_ID,
            TWITTER_DOCS_ID,
            sonyflake_id(NOW, 3),
            made_by(&Layout::default(), NOW),
        ] {
            let readings = plausible_readings(id, NOW);
            assert!(
                readings.windows(2).all(|w| w[0].1 >= w[1].1),
                "{readings:?}"
            );
            let tiers: Vec<bool> = readings
                .iter()
                .map(|(_, at)| *at >= NOW - RECENT_MS)
                .collect();
            assert!(tiers.windows(2).all(|w| w[0] == w[1]), "{readings:?}");
        }
    }

    #[test]
    fn a_day_of_slack_and_no_more() {
        let ms = Parts::FUTURE_SLACK_MS;
        let id = made_by(&Layout::default(), NOW + ms);
        assert!(Layout::plausible_presets(id, NOW).contains(&"default"));
        let id = made_by(&Layout::default(), NOW + ms + 1);
        assert!(!Layout::plausible_presets(id, NOW).contains(&"default"));
    }

    #[test]
    fn an_id_with_the_sign_bit_fits_no_preset() {
        assert!(Layout::plausible_presets(u64::MAX, NOW).is_empty());
    }

    #[test]
    fn the_assumed_layout_warning_speaks_each_front_ends_words() {
        let now = crate::clock::system_now_ms();
        let id = made_by(&Layout::twitter(), now);
        let parts = Layout::default().decode(id).unwrap();
        let said = |f| assumed_layout_warning(id, &parts, f).unwrap();
        let cli = said(Frontend::Cli);
        assert_eq!(cli.kind(), Warning::ASSUMED_LAYOUT);
        assert!(
            cli.message().starts_with(&format!(
                "{id} was read with the default layout, as neither --layout nor \
                 RIMEFLAKE_LAYOUT was given: by it, the ID was made at 20"
            )),
            "{cli}"
        );
        assert!(cli.message().ends_with("try --layout twitter"), "{cli}");
        assert!(said(Frontend::Node)
            .message()
            .ends_with("try layout 'twitter'"));
        assert!(said(Frontend::Python)
            .message()
            .contains("as no layout was given: "));
        // A reading that is not in the future: nothing to say.
        let own = made_by(&Layout::default(), now);
        let parts = Layout::default().decode(own).unwrap();
        assert!(assumed_layout_warning(own, &parts, Frontend::Cli).is_none());
    }
}
