package price

import "encoding/json"

// Snapshot describes one embedded table: where its rows were taken from
// and when.
type Snapshot struct {
	// Source is the price source of its rows: [SourceLiteLLM] or
	// [SourceModelsDev].
	Source string `json:"source"`
	// Date is the day the snapshot was taken (YYYY-MM-DD).
	Date string `json:"date"`
	// From says where the rows were extracted from.
	From string `json:"from"`
}

// Snapshots returns the embedded tables, LiteLLM's first: what
// `sessionpipe version` shows. The dates are those the generator
// (testdata/regen.py) recorded in the files' "_snapshot" rows.
func Snapshots() []Snapshot {
	out := make([]Snapshot, 0, numLayers)
	for i, doc := range [numLayers]string{embedded, embeddedModelsDev} {
		var v struct {
			S struct {
				Date   string `json:"date"`
				Source string `json:"source"`
			} `json:"_snapshot"`
		}
		_ = json.Unmarshal([]byte(doc), &v) // TestSnapshots checks both parse
		out = append(out, Snapshot{Source: layerSource[i], Date: v.S.Date, From: v.S.Source})
	}
	return out
}
