package jsonl_test

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// Read the type and usage of each line of a transcript, skipping the rest.
func ExampleScanner() {
	input := `{"type":"assistant","message":{"id":"msg_1","content":[{"type":"text","text":"Hi \"there\""}],"usage":{"input_tokens":3,"output_tokens":441}}}
{"type":"user","message":{"content":"ok"}}{"type":"summary","summary":"two objects on one line"}
{"type":"broken",
{"type":"half-writ`
	rd := jsonl.NewReader(strings.NewReader(input), jsonl.ReaderConfig{})
	var s jsonl.Scanner
	for {
		line, err := rd.Next()
		if errors.Is(err, io.EOF) {
			fmt.Printf("held back: %q\n", rd.Buffered())
			return
		}
		s.Reset(line.Bytes)
		for s.More() {
			if !s.EnterObject() {
				break
			}
			var typ string
			var out int64
			for s.NextField() {
				switch string(s.Key()) {
				case "type":
					typ = s.Value().String()
				case "message":
					if !s.EnterObject() {
						continue
					}
					for s.NextField() {
						if string(s.Key()) == "usage" && s.EnterObject() {
							for s.NextField() {
								if string(s.Key()) == "output_tokens" {
									out, _ = s.Value().Int()
								}
							}
						}
					}
				}
			}
			if s.Err() == nil {
				fmt.Printf("line %d: %s output=%d\n", line.Number, typ, out)
			}
		}
		if err := s.Err(); err != nil {
			fmt.Printf("line %d: %v\n", line.Number, err)
		}
	}
	// Output:
	// line 1: assistant output=441
	// line 2: user output=0
	// line 2: summary output=0
	// line 3: jsonl: unexpected end of JSON input at offset 17
	// held back: "{\"type\":\"half-writ"
}
