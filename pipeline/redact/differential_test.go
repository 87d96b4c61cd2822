package redact_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/testcorpus"
	"github.com/sessionpipe/sessionpipe/pipeline/redact"
)

// The differential tests: JSON (strings.go's cursor) gives, byte for
// byte and count for count, what its reference, the implementation it
// replaced (reference_test.go), gives, with AVX2 and without, with the
// probe of escaped strings and without, on the samples, a generated
// corpus, the fuzz corpus, every fake secret in every context, and
// random and mutated inputs dense in quotes, backslashes and escapes.

// sameAsReference checks JSON against JSONReference on in, under every
// switch, and that the probe of escaped strings changes nothing (see
// TestJSON_ProbeChangesNothing), and returns the number of secrets found.
func sameAsReference(t *testing.T, r *redact.Redactor, in []byte, where string) int64 {
	t.Helper()
	var (
		n     int64
		first []byte
	)
	for _, avx2 := range []bool{true, false} {
		for _, probe := range []bool{true, false} {
			restoreAVX2, restoreProbe := redact.SetAVX2(avx2), redact.SetProbeEscaped(probe)
			keep := bytes.Clone(in)
			var st, stRef redact.Stats
			got := r.JSON(in, &st)
			want := r.JSONReference(in, &stRef)
			restoreProbe()
			restoreAVX2()
			require.Equal(t, keep, in, "%s: input written", where)
			if !bytes.Equal(got, want) {
				i := 0
				for i < min(len(got), len(want)) && got[i] == want[i] {
					i++
				}
				t.Fatalf("%s (avx2 %v, probe %v): output differs from the reference at byte %d of %d/%d:\ngot  …%q…\nwant …%q…\ninput …%q…",
					where, avx2, probe, i, len(got), len(want), around(got, i), around(want, i), around(in, i))
			}
			require.Equal(t, stRef, st, "%s (avx2 %v, probe %v): counts", where, avx2, probe)
			// Nothing found: the input itself, as the reference.
			require.Equal(t, sameSlice(want, in), sameSlice(got, in), "%s: returned the input itself", where)
			if first == nil {
				first, n = got, st.Total()
			} else if !bytes.Equal(got, first) || st.Total() != n {
				t.Fatalf("%s: the probe (on: %q) changes the output (off: %q)", where, around(first, 0), around(got, 0))
			}
		}
	}
	return n
}

func around(b []byte, i int) []byte { return b[max(0, i-40):min(len(b), i+40)] }

func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// fuzzCorpus returns the inputs of the checked-in fuzz corpus.
func fuzzCorpus(t *testing.T) (ins [][]byte) {
	files, err := filepath.Glob("testdata/fuzz/*/*")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, name := range files {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		for _, l := range strings.Split(string(b), "\n")[1:] {
			if lit, ok := strings.CutPrefix(l, "[]byte("); ok {
				s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
				require.NoError(t, err, "%s", name)
				ins = append(ins, []byte(s))
			}
		}
	}
	require.NotEmpty(t, ins)
	return ins
}

// secretDocs are every fake secret in every context, and as JSON string
// values with escapes hugging them.
func secretDocs(seed uint64) (docs [][]byte) {
	for _, fk := range newFaker(seed).all() {
		for _, c := range contexts {
			docs = append(docs, []byte(c.wrap(fk.Text)))
		}
		for _, s := range []string{"\n" + fk.Text + "\n", "\t" + fk.Text, "\"" + fk.Text + "\"", `\` + fk.Text, "/" + fk.Text + "/"} {
			docs = append(docs, must(json.Marshal(map[string]string{"text": s})))
		}
	}
	return docs
}

func TestJSON_MatchesReference_Samples(t *testing.T) {
	r := mustNew(t, redact.Config{})
	lines, where := corpusLines(t)
	for i, l := range lines {
		sameAsReference(t, r, l, where[i])
	}
	for i, in := range fuzzCorpus(t) {
		sameAsReference(t, r, in, fmt.Sprintf("fuzz corpus %d", i))
	}
	var found int64
	for i, d := range secretDocs(11) {
		found += sameAsReference(t, r, d, fmt.Sprintf("secret doc %d", i))
	}
	require.Greater(t, found, int64(len(newFaker(11).all())), "the documents hold secrets")
}

func TestJSON_MatchesReference_Generated(t *testing.T) {
	r := mustNew(t, redact.Config{})
	lines, _ := jsonlLines(t, testcorpus.Generate(t, 4<<20, 7))
	secrets := secretDocs(12)
	rnd := rand.New(rand.NewPCG(7, 8))
	for i, l := range lines {
		sameAsReference(t, r, l, fmt.Sprintf("generated line %d", i))
		// The same line mutated: a secret, quotes, backslashes and
		// escapes put in, bytes taken out, cut short.
		m := mutate(rnd, l, secrets)
		sameAsReference(t, r, m, fmt.Sprintf("generated line %d mutated: %q", i, around(m, 0)))
	}
}

// pieces are what random inputs are made of: JSON structure, escapes of
// every kind (valid, malformed, cut), anchors, and bytes that are not
// UTF-8.
var pieces = []string{
	`"`, `"`, `\`, `\`, `\\`, `\"`, `\n`, `\/`, `/`, `u`, `\u`, `\u0`, `\u00`, `\u002f`, `\u002F`, `\u0073`,
	`\u006B`, `\u0041`, `\u00e9`, `\u001b`, `\ud83d\ude00`, `\ud800`, `\udc00x`, `\uzzzz`, `\x`, `\'`,
	`{`, `}`, `[`, `]`, `:`, `,`, ` `, "\t", "\n", `"a":`, `"password":`, `"token" : `, `\"password\":\"`,
	"sk-", "ghp_", "AKIA", "eyJ", "://", "@", "Bearer ", "authorization", "passw", "secret", "-----BEGIN ",
	"hunter2Hunter2", "0123456789abcdef", "xyz", "\xff", "\xc3", "\xe2\x82", "\x00", "é",
}

// randomJSONish returns n pieces at random.
func randomJSONish(rnd *rand.Rand, n int) []byte {
	var b []byte
	for range n {
		b = append(b, pieces[rnd.IntN(len(pieces))]...)
	}
	return b
}

// mutate returns a copy of l with a few random edits.
func mutate(rnd *rand.Rand, l []byte, secrets [][]byte) []byte {
	m := bytes.Clone(l)
	for range 1 + rnd.IntN(4) {
		at := rnd.IntN(len(m) + 1)
		switch rnd.IntN(6) {
		case 0: // a secret, as a JSON string's content
			s := secrets[rnd.IntN(len(secrets))]
			js := must(json.Marshal(string(s)))
			m = append(m[:at:at], append(js[1:len(js)-1], m[at:]...)...)
		case 1:
			m = append(m[:at:at], append(randomJSONish(rnd, 1+rnd.IntN(6)), m[at:]...)...)
		case 2:
			m = append(m[:at:at], append([]byte(`\`), m[at:]...)...)
		case 3:
			m = append(m[:at:at], append([]byte(`"`), m[at:]...)...)
		case 4:
			m = append(m[:at:at], m[min(len(m), at+1+rnd.IntN(8)):]...)
		case 5:
			m = m[:at]
		}
	}
	return m
}

func TestJSON_MatchesReference_Random(t *testing.T) {
	r := mustNew(t, redact.Config{})
	rnd := rand.New(rand.NewPCG(1, 19))
	for i := range 20000 {
		in := randomJSONish(rnd, rnd.IntN(80))
		sameAsReference(t, r, in, fmt.Sprintf("random %d: %q", i, in))
	}
	// Secrets hidden by escapes, each escape at every offset around the
	// blocks (its backslash at the end of one, what it escapes at the
	// start of the next).
	for _, hidden := range []string{
		`\u0041KIAQWERTYUIOPASDFG1`, `\\u0041KIAQWERTYUIOPASDFG1`, `\\u\u0030041KIAQWERTYUIOPASDFG1`,
		`https:\/\/app:S3cretPassw0rd9@db.example.com`, `https:\\/\\/app:S3cretPassw0rd9@db.example.com`,
		`https:\//app:S3cretPassw0rd9@db.example.com`, `https:\\//app:S3cretPassw0rd9@db.example.com`,
		`x \"api_key\u0022: \"q8W3e7R1t5Y9u2I4o6P0\"`,
	} {
		found := int64(0)
		for n := range 140 {
			in := []byte(`{"a":"` + strings.Repeat("x", n) + " " + hidden + `"}`)
			found += sameAsReference(t, r, in, fmt.Sprintf("%q after %d bytes", hidden, n))
		}
		require.Equal(t, int64(140), found, "%q: found every time", hidden)
	}
	// Every fake secret at every offset around the blocks, as a JSON
	// string's text (its anchor's pair across two blocks, among others).
	for _, fk := range newFaker(15).all() {
		js := string(must(json.Marshal(fk.Text)))
		for n := range 130 {
			in := []byte(`{"a":"` + strings.Repeat("x", n) + " " + js[1:len(js)-1] + ` y"}`)
			require.Positive(t, sameAsReference(t, r, in, fmt.Sprintf("%q after %d bytes", fk.Text, n)), "%q after %d bytes", fk.Text, n)
		}
	}
	// Every length around the blocks, runs of backslashes of every
	// length before a quote at every offset.
	for n := range 200 {
		for k := range min(n, 70) {
			in := []byte(`{"a":"` + strings.Repeat("x", n-k) + strings.Repeat(`\`, k) + `"ghp_` + strings.Repeat("A", 36) + `"}`)
			sameAsReference(t, r, in, fmt.Sprintf("run of %d backslashes at %d", k, n))
			in = []byte(strings.Repeat(`\`, k) + `"` + strings.Repeat("y", n) + `\"AKIAABCDEFGHIJKLMNOP"`)
			sameAsReference(t, r, in, fmt.Sprintf("run of %d backslashes before an opening quote, %d", k, n))
		}
	}
}

func TestJSON_MatchesReference_Huge(t *testing.T) {
	r := mustNew(t, redact.Config{})
	rnd := rand.New(rand.NewPCG(3, 4))
	secrets := secretDocs(13)
	doc := func(size int) []byte {
		var text strings.Builder
		for text.Len() < size {
			text.WriteString(`{"k":"v\n\t\"x\" \\ \/ \u0041\u00e9 `)
			if rnd.IntN(50) == 0 {
				text.Write(secrets[rnd.IntN(len(secrets))])
			}
			text.WriteString(`"}` + "\n")
		}
		return must(json.Marshal(map[string]string{"type": "tool_result", "content": text.String()}))
	}
	require.Positive(t, sameAsReference(t, r, doc(4<<20), "4 MiB of escapes"))
	// Unterminated, cut at every offset around its end.
	js := doc(64 << 10)
	for cut := range 130 {
		sameAsReference(t, r, js[:len(js)-cut], fmt.Sprintf("64 KiB cut %d bytes short", cut))
	}
	big := randomJSONish(rnd, 1<<20)
	sameAsReference(t, r, big, "random pieces, 1 Mi of them")
}

// FuzzJSONMatchesReference checks JSON against its reference on any
// input.
func FuzzJSONMatchesReference(f *testing.F) {
	for _, d := range secretDocs(14) {
		f.Add(d)
	}
	rnd := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		f.Add(randomJSONish(rnd, rnd.IntN(40)))
	}
	// Small seeds (the samples' lines are the other tests' business): the
	// fuzzer mutates them many times a second.
	r := mustNew(f, redact.Config{})
	f.Fuzz(func(t *testing.T, in []byte) {
		sameAsReference(t, r, in, "fuzz input")
	})
}
