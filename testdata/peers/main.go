// Command peers writes vectors.json: IDs made by peer libraries with their own code, each with
// the parts the peer itself reads from it, and the rimeflake layout spec that describes the
// peer's layout. rimeflake's tests decode every ID through that spec and compare field for
// field (crates/rimeflake/tests/peers.rs, the CLI's tests, the Python tests).
//
// Run it with `make peer-vectors` (go run . > vectors.json here). The versions are pinned in
// go.mod; the Go module proxy serves them.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/bwmarrin/snowflake"
	sonyv1 "github.com/sony/sonyflake"
	sonyv2 "github.com/sony/sonyflake/v2"
)

// perPeer IDs are made for each peer, in bursts with short pauses so that they span many time
// units, several sequence numbers and more than one worker.
const perPeer = 2000

// row is one ID and the parts the peer reads from it. Numbers are decimal strings, as in
// testdata/vectors.json (JavaScript's JSON.parse would round 64-bit numbers).
type row struct {
	ID           string  `json:"id"`
	TimestampMs  string  `json:"timestamp_ms"`
	DatacenterID *string `json:"datacenter_id,omitempty"`
	WorkerID     string  `json:"worker_id"`
	Sequence     string  `json:"sequence"`
}

type peer struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	MadeBy string `json:"made_by"`
	Parts  string `json:"parts_from"`
	Layout string `json:"layout"`
	rows   []row
}

func u(n uint64) string { return strconv.FormatUint(n, 10) }
func i(n int64) string  { return strconv.FormatInt(n, 10) }

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(1)
	}
}

// bursts calls make perPeer times, pausing after every burst IDs so time moves on.
func bursts(burst int, pause time.Duration, next func(n int) row) []row {
	rows := newRows(perPeer)
	for n := 0; n < perPeer; n++ {
		rows = append(rows, next(n))
		if (n+1)%burst == 0 {
			time.Sleep(pause)
		}
	}
	return rows
}

func newRows(n int) []row { return make([]row, 0, n) }

// sonyV1 makes IDs with sony/sonyflake v1 and a given start time (zero: its default,
// 2014-09-01). v1 has no ToTime: the time is its own elapsed units (Decompose) counted from
// its own start unit, which it computes as start.UnixNano() / 10 ms.
func sonyV1(start time.Time, machines []uint16) []row {
	gens := make([]*sonyv1.Sonyflake, len(machines))
	for k, m := range machines {
		m := m
		g, err := sonyv1.New(sonyv1.Settings{StartTime: start, MachineID: func() (uint16, error) { return m, nil }})
		must(err)
		gens[k] = g
	}
	if start.IsZero() {
		start = time.Date(2014, 9, 1, 0, 0, 0, 0, time.UTC)
	}
	startUnit := start.UnixNano() / int64(10*time.Millisecond)
	return bursts(97, 7*time.Millisecond, func(n int) row {
		id, err := gens[n%len(gens)].NextID()
		must(err)
		p := sonyv1.Decompose(id)
		return row{
			ID:          u(id),
			TimestampMs: i((startUnit + int64(p["time"])) * 10),
			WorkerID:    u(p["machine-id"]),
			Sequence:    u(p["sequence"]),
		}
	})
}

// sonyV2 makes IDs with sony/sonyflake v2 and reads them back with its own Decompose and ToTime.
func sonyV2(st sonyv2.Settings, machines []int) []row {
	gens := make([]*sonyv2.Sonyflake, len(machines))
	for k, m := range machines {
		m := m
		s := st
		s.MachineID = func() (int, error) { return m, nil }
		g, err := sonyv2.New(s)
		must(err)
		gens[k] = g
	}
	return bursts(89, 13*time.Millisecond, func(n int) row {
		g := gens[n%len(gens)]
		id, err := g.NextID()
		must(err)
		p := g.Decompose(id)
		return row{
			ID:          i(id),
			TimestampMs: i(g.ToTime(id).UnixMilli()),
			WorkerID:    i(p["machine"]),
			Sequence:    i(p["sequence"]),
		}
	})
}

// bwmarrinSnowflake makes IDs with bwmarrin/snowflake's defaults (Twitter's epoch, 10 node
// bits, 12 step bits) and reads them back with its own Time, Node and Step.
func bwmarrinSnowflake(nodes []int64) []row {
	gens := make([]*snowflake.Node, len(nodes))
	for k, n := range nodes {
		g, err := snowflake.NewNode(n)
		must(err)
		gens[k] = g
	}
	return bursts(211, 3*time.Millisecond, func(n int) row {
		id := gens[n%len(gens)].Generate()
		return row{
			ID:          i(id.Int64()),
			TimestampMs: i(id.Time()),
			WorkerID:    i(id.Node()),
			Sequence:    i(id.Step()),
		}
	})
}

// baiduComputed is NOT Baidu's code: Baidu never published uid-generator to Maven Central
// (baidu/uid-generator issues #7, #30, #48), and only registries are reachable here. It
// computes IDs by the layout Baidu documents in DefaultUidGenerator and BitsAllocator:
// sign 0 | 28 bits of seconds since epochSeconds | 22 worker bits | 13 sequence bits, with
// epochSeconds = 1463673600000 ms / 1000 (its default epochStr "2016-05-20", midnight in
// Beijing) and seconds = System.currentTimeMillis() / 1000. Instants are spread over the years
// the layout could generate (2016-05-20 to 2024-11-20), as a generator would have made them.
func baiduComputed() []row {
	const epochSeconds = 1463673600000 / 1000
	const maxDelta = 1<<28 - 1
	rows := newRows(perPeer)
	workers := []uint64{0, 1, 4095, 1<<22 - 1}
	for n := 0; n < perPeer; n++ {
		// A deterministic walk over the whole time field: 97 seconds of steady use, then a jump.
		delta := uint64(n/8)*(maxDelta/(perPeer/8)) + uint64(n%8)
		if delta > maxDelta {
			delta = maxDelta
		}
		worker := workers[n%len(workers)]
		seq := uint64(n%8) * 1170 % 8192
		id := delta<<35 | worker<<13 | seq
		rows = append(rows, row{
			ID:          u(id),
			TimestampMs: u((epochSeconds + delta) * 1000),
			WorkerID:    u(worker),
			Sequence:    u(seq),
		})
	}
	return rows
}

func main() {
	dc := func(s string) *string { return &s }
	peers := []peer{
		{
			Name:   "sony/sonyflake v1, default start time (2014-09-01)",
			Source: "github.com/sony/sonyflake v1.2.0",
			MadeBy: "the peer: Sonyflake.NextID, machine IDs 1 and 65535",
			Parts:  "the peer: sonyflake.Decompose (time, sequence, machine-id); timestamp_ms = (start unit + time) x 10 ms, start unit = StartTime.UnixNano() / 10 ms as the peer computes it",
			Layout: "sonyflake",
			rows:   sonyV1(time.Time{}, []uint16{1, 65535}),
		},
		{
			Name:   "sony/sonyflake v1, start time 7 ms into a 10 ms unit (2020-01-01T00:00:00.007Z)",
			Source: "github.com/sony/sonyflake v1.2.0",
			MadeBy: "the peer: Sonyflake.NextID, machine ID 4660",
			Parts:  "the peer: sonyflake.Decompose; timestamp_ms as above (the peer counts units from Unix-aligned boundaries)",
			Layout: "time=39,worker=16,sequence=8,unit_ms=10,epoch=2020-01-01T00:00:00.007Z,order=sequence_first",
			rows:   sonyV1(time.Date(2020, 1, 1, 0, 0, 0, 7_000_000, time.UTC), []uint16{4660}),
		},
		{
			Name:   "sony/sonyflake v2, default settings (2025-01-01, 10 ms)",
			Source: "github.com/sony/sonyflake/v2 v2.2.0",
			MadeBy: "the peer: Sonyflake.NextID, machine IDs 0 and 48879",
			Parts:  "the peer: Sonyflake.Decompose (time, sequence, machine) and Sonyflake.ToTime",
			Layout: "sonyflake_v2",
			rows:   sonyV2(sonyv2.Settings{}, []int{0, 48879}),
		},
		{
			Name:   "sony/sonyflake v2, 100 ms units, 10 sequence and 12 machine bits, start 2025-03-01T00:00:00.050Z",
			Source: "github.com/sony/sonyflake/v2 v2.2.0",
			MadeBy: "the peer: Sonyflake.NextID, machine IDs 7 and 4095",
			Parts:  "the peer: Sonyflake.Decompose and Sonyflake.ToTime",
			Layout: "time=41,worker=12,sequence=10,unit_ms=100,epoch=2025-03-01T00:00:00.050Z,order=sequence_first",
			rows: sonyV2(sonyv2.Settings{
				BitsSequence:  10,
				BitsMachineID: 12,
				TimeUnit:      100 * time.Millisecond,
				StartTime:     time.Date(2025, 3, 1, 0, 0, 0, 50_000_000, time.UTC),
			}, []int{7, 4095}),
		},
		{
			Name:   "bwmarrin/snowflake, default settings (Twitter's epoch, 10 node bits)",
			Source: "github.com/bwmarrin/snowflake v0.3.0",
			MadeBy: "the peer: Node.Generate, nodes 0, 1 and 1023",
			Parts:  "the peer: ID.Time, ID.Node, ID.Step",
			Layout: "clock_id=0,time=41,worker=10,sequence=12,epoch_ms=1288834974657",
			rows:   bwmarrinSnowflake([]int64{0, 1, 1023}),
		},
		{
			Name:   "Baidu uid-generator, its own default epoch (2016-05-20 in Beijing)",
			Source: "COMPUTED, not made by Baidu's code: see baiduComputed in testdata/peers/main.go",
			MadeBy: "testdata/peers/main.go, independently of rimeflake, by the layout Baidu documents (DefaultUidGenerator, BitsAllocator); Baidu's jar is not on Maven Central",
			Parts:  "the same arithmetic: timestamp_ms = (epochSeconds + delta seconds) x 1000",
			Layout: "baidu",
			rows:   baiduComputed(),
		},
		{
			Name:   "Discord's documented example ID",
			Source: "Discord developer documentation, Reference > Snowflakes (example 175928847299117063)",
			MadeBy: "Discord; copied from the documentation with the parts it publishes: timestamp 1462015105796, internal worker ID 1, internal process ID 0, increment 7",
			Parts:  "the documentation: internal worker ID is the datacenter part, internal process ID the worker part",
			Layout: "clock_id=0,time=41,worker=10,sequence=12,datacenter=5,epoch_ms=1420070400000",
			rows: []row{{
				ID: "175928847299117063", TimestampMs: "1462015105796",
				DatacenterID: dc("1"), WorkerID: "0", Sequence: "7",
			}},
		},
	}

	var b strings.Builder
	b.WriteString("{\n")
	fmt.Fprintf(&b, "  \"$comment\": %s,\n", quote("IDs made by peer libraries, each with the parts the peer reads from it, and the rimeflake layout spec (Layout::from_spec) that describes it: decoding id through layout must give timestamp_ms, datacenter_id (only where given), worker_id and sequence exactly, and composing those parts must give id back. Numbers are decimal strings. Made by testdata/peers/main.go (make peer-vectors); do not edit by hand. The Baidu entry is computed by that program from Baidu's documented layout, not made by Baidu's code (see its source field)."))
	fmt.Fprintf(&b, "  \"generated\": {\"command\": \"make peer-vectors (cd testdata/peers && go run . > vectors.json)\", \"go\": %s, \"date\": %s},\n",
		quote(runtime.Version()), quote(time.Now().UTC().Format("2006-01-02")))
	b.WriteString("  \"peers\": [\n")
	for k, p := range peers {
		b.WriteString("    {\n")
		fmt.Fprintf(&b, "      \"name\": %s,\n      \"source\": %s,\n      \"made_by\": %s,\n      \"parts_from\": %s,\n      \"layout\": %s,\n      \"ids\": [\n",
			quote(p.Name), quote(p.Source), quote(p.MadeBy), quote(p.Parts), quote(p.Layout))
		for n, r := range p.rows {
			line, err := json.Marshal(r)
			must(err)
			sep := ","
			if n == len(p.rows)-1 {
				sep = ""
			}
			fmt.Fprintf(&b, "        %s%s\n", line, sep)
		}
		sep := ","
		if k == len(peers)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "      ]\n    }%s\n", sep)
	}
	b.WriteString("  ]\n}\n")
	_, err := os.Stdout.WriteString(b.String())
	must(err)
}

func quote(s string) string {
	q, err := json.Marshal(s)
	must(err)
	return string(q)
}
