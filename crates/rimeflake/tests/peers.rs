//! IDs made by peer libraries (`testdata/peers/vectors.json`, made by `make peer-vectors`)
//! decode field for field through the layout spec that describes each peer, and compose back.

use rimeflake::{Layout, Parts};
use serde_json::Value;
use std::path::PathBuf;

fn peers() -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/peers/vectors.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let v: Value = serde_json::from_str(&text).expect("valid JSON");
    v["peers"].as_array().unwrap().clone()
}

fn num(v: &Value) -> u64 {
    v.as_str().unwrap().parse().unwrap()
}

#[test]
fn every_peer_id_decodes_field_for_field_and_composes_back() {
    let peers = peers();
    assert!(
        peers.len() >= 7,
        "sony v1 (2), sony v2 (2), bwmarrin, Baidu, Discord"
    );
    let mut checked = 0;
    for peer in &peers {
        let name = peer["name"].as_str().unwrap();
        let layout = Layout::from_spec(peer["layout"].as_str().unwrap())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        for row in peer["ids"].as_array().unwrap() {
            let id = num(&row["id"]);
            let p = layout
                .decode(id)
                .unwrap_or_else(|e| panic!("{name}: {id}: {e}"));
            let want = Parts {
                clock_id: 0,
                timestamp_ms: num(&row["timestamp_ms"]),
                datacenter_id: row.get("datacenter_id").map(num),
                worker_id: num(&row["worker_id"]),
                sequence: num(&row["sequence"]),
            };
            // A layout without a datacenter part reads none; one with it always reads one.
            assert_eq!(p, want, "{name}: {id}");
            assert_eq!(layout.compose(&want).unwrap(), id, "{name}: compose {id}");
            checked += 1;
        }
    }
    assert!(checked > 10_000, "{checked}");
}

#[test]
fn twitter_reads_bwmarrin_nodes_as_datacenter_and_worker() {
    let peers = peers();
    let bw = peers
        .iter()
        .find(|p| p["name"].as_str().unwrap().starts_with("bwmarrin"))
        .unwrap();
    let twitter = Layout::twitter();
    for row in bw["ids"].as_array().unwrap() {
        let p = twitter.decode(num(&row["id"])).unwrap();
        let node = num(&row["worker_id"]);
        assert_eq!((p.datacenter_id, p.worker_id), (Some(node >> 5), node & 31));
        assert_eq!(twitter.worker_field(&p), node);
    }
}
