//! [`Layout::plausible_presets`]: which presets could have made an ID, for a decoder that had
//! to assume a layout and got a time no generator can have made yet.

use super::{Layout, Parts};
use crate::contract::Frontend;
use crate::warning::Warning;

impl Layout {
    /// The presets under which `id` reads as a time no later than a day
    /// ([`Parts::FUTURE_SLACK_MS`]) past `now_ms`, the Unix time in milliseconds, the latest
    /// reading first (the likeliest, for a recent ID).
    /// A reading never lies before its layout's epoch (the time field counts from it), so the
    /// future is the one sign of a wrong layout. `baidu` is read with its own epoch.
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
    /// let presets = Layout::plausible_presets(id, now_ms);
    /// assert!(presets.contains(&"twitter"));
    /// assert!(!presets.contains(&"default"));
    /// # Ok::<(), rimeflake::Error>(())
    /// ```
    pub fn plausible_presets(id: u64, now_ms: u64) -> Vec<&'static str> {
        let latest = now_ms.saturating_add(Parts::FUTURE_SLACK_MS);
        let mut readings: Vec<(u64, &'static str)> = Layout::PRESETS
            .into_iter()
            .filter_map(|name| {
                let parts = Layout::preset(name).and_then(|l| l.decode(id)).ok()?;
                (parts.timestamp_ms <= latest).then_some((parts.timestamp_ms, name))
            })
            .collect();
        // Latest first: the IDs people decode are mostly recent ones. Stable, so equal times
        // keep the presets' order.
        readings.sort_by_key(|r| std::cmp::Reverse(r.0));
        readings.into_iter().map(|(_, name)| name).collect()
    }

    /// [`Layout::plausible_presets`] against the system clock.
    pub fn plausible_presets_now(id: u64) -> Vec<&'static str> {
        Layout::plausible_presets(id, crate::clock::system_now_ms())
    }
}

/// What a decoder says when it read `id` with the default layout because its user named none,
/// and the time it read (`parts`) lies well in the future ([`Parts::is_well_in_the_future`]):
/// a warning of kind [`Warning::ASSUMED_LAYOUT`] that says so and names the presets that read
/// the ID as a past time ([`Layout::plausible_presets`]), in `frontend`'s words. `None` for a
/// time that is not in the future.
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
    let plausible = Layout::plausible_presets_now(id);
    let message = match plausible.as_slice() {
        [] => {
            format!("{read}; no preset reads it as a past time: give the layout it was made with")
        }
        [one] => format!(
            "{read}; the {one} preset reads it as a past time: try {}",
            give(one)
        ),
        many => format!(
            "{read}; the presets {} read it as a past time (the latest reading first): try {}",
            many.join(", "),
            give(many[0])
        ),
    };
    Some(Warning::new(Warning::ASSUMED_LAYOUT, message))
}

#[cfg(test)]
mod tests {
    use super::*;

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
