package corpusgen

import (
	"encoding/base64"
	"math"
	"math/rand/v2"
	"time"
	"unicode/utf8"
)

// textStyle selects the fragments a body text is made of.
type textStyle uint8

const (
	styleProse textStyle = iota // assistant replies and user prompts: markdown
	styleCode                   // file contents as the Read tool shows them
	styleShell                  // command output
	styleThink                  // thinking blocks: plain reasoning
	numStyles
)

// The fragments below are already JSON-escaped: each is the exact text
// that goes between the quotes of a JSON string, and each is a whole
// escape sequence or UTF-8 character, so any concatenation is valid.
// Raw non-ASCII characters appear as Claude Code writes them (JavaScript
// JSON.stringify leaves them raw); \u escapes, surrogate pairs included,
// appear as tools that escape non-ASCII write them.
var fragments = [numStyles][]string{
	styleProse: {
		`the `, `file `, `function `, `test `, `I'll `, `check `, `update `, `error `, `config `, `session `,
		`because `, `which `, `returns `, `value `, `parser `, `should `, `now `, `let me `, `look at `, `this `,
		`handler `, `request `, `token `, `cache `, `output `, `and `, `with `, `from `, `into `, `before `,
		"`Run(ctx)` ", "`go test ./...` ", `**Note:** `, `**Summary**`, `\n\n`, `\n- `, `\n1. `, `\n## `,
		`\"quoted\" `, `C:\\Users\\dev\\app `, `café `, `naïve `, `résumé `, `Zürich `, `señor `,
		`日本語の説明 `, `测试用例 `, `한국어 `, `🚀 `, `✅ `, `😀 `, `→ `, `— `, `caf\u00e9 `, `\ud83d\ude00 `,
		`done. `, `It works. `, `(see above) `, `e.g. `, `i.e. `, `50% `, `O(n) `, `<tag> `, `a & b `,
	},
	styleCode: {
		`     1→package main\n`, `     2→\n`, `    12→import (\n`, `    13→\t\"context\"\n`,
		`    14→\t\"fmt\"\n`, `    15→)\n`, `    40→func (s *Server) Start(ctx context.Context) error {\n`,
		`    41→\tif err := s.listen(); err != nil {\n`, `    42→\t\treturn fmt.Errorf(\"start: %w\", err)\n`,
		`    43→\t}\n`, `    44→\treturn nil\n`, `    45→}\n`, `   101→\t// Résumé of the état: naïve café\n`,
		`   102→\tpath := \"C:\\\\Users\\\\dev\\\\go\"\n`, `   103→\tmsg := \"caf\u00e9 \ud83d\ude00\"\n`,
		`   104→\tlabel := \"日本語ラベル 🚀\"\n`, "   210→const re = `^\\\\d+\\\\.\\\\d+$`" + `\n`,
		`   211→\tfor i := 0; i < len(b); i++ {\n`, `   212→\t\tif b[i] == '\"' || b[i] == '\\\\' {\n`,
		`   300→def handler(event, context):\n`, `   301→    return {\"statusCode\": 200, \"body\": json.dumps(body)}\n`,
		`   302→# コメント: 処理を開始\n`, `   400→  \"name\": \"sessionpipe\",\n`, `   401→  \"version\": \"1.2.3\",\n`,
	},
	styleShell: {
		`ok  \tgithub.com/example/app/pkg\t0.412s\n`, `--- FAIL: TestParse (0.00s)\n`,
		`    parse_test.go:42: got \"a\\tb\", want \"a\\nb\"\n`, `FAIL\n`, `PASS\n`,
		`total 48\n`, `drwxr-xr-x  5 dev dev 4096 Feb 11 20:36 .\n`, `-rw-r--r--  1 dev dev 1832 Feb 11 20:31 go.mod\n`,
		`\u001b[32m✓\u001b[0m build passed\n`, `\u001b[31m✗\u001b[0m lint: 3 issues\n`, "warning: unused variable `x`" + `\n`,
		`error[E0308]: mismatched types\n`, `  --> src/main.rs:14:9\n`, `Compiling app v0.1.0 (/home/dev/app)\n`,
		`npm WARN deprecated inflight@1.0.6\n`, `added 312 packages in 4s\n`, `Résultat: succès 🎉\n`,
		`ファイルが見つかりません\n`, `{\"level\":\"info\",\"msg\":\"started\",\"port\":7474}\n`, `\t at Object.<anonymous> (index.js:3:9)\n`,
		`M  internal/app/server.go\n`, `?? notes/draft.md\n`, `Already up to date.\n`,
	},
	styleThink: {
		`The user wants `, `me to `, `fix the `, `failing test. `, `Let me think about `, `what could cause `,
		`this. `, `The parser `, `reads the `, `whole line `, `and the `, `offset is `, `wrong when `,
		`the line `, `has a `, `BOM. `, `Actually, `, `wait — `, `that's not it. `, `Maybe the `,
		`cache `, `key includes `, `the \"requestId\" `, `field. `, `I should `, `check the `, `spec first.\n\n`,
		`Options:\n`, `1. `, `2. `, `naïve approach `, `déjà vu `, `🤔 `, `考えてみる `,
	},
}

// words are short safe ASCII words for names and descriptions.
var words = []string{
	"alpha", "bravo", "cache", "delta", "engine", "filter", "gateway", "handler", "index", "journal",
	"kernel", "ledger", "matrix", "native", "offset", "parser", "quota", "router", "schema", "tailer",
	"update", "vector", "worker", "export", "yield", "zone",
}

// gen holds the random sources of one session. Structure (ids,
// timestamps, counters, which lines exist) and bodies (the text and image
// content) draw from separate sources, so a resumed copy that clamps a
// body differently still replays the same ids and timestamps.
type gen struct {
	r *rand.Rand // structure
	b *rand.Rand // bodies

	tmp  []byte // scratch: measured renders, raw image bytes
	body []byte // the body of the line being emitted
}

func newGen(seed uint64) *gen {
	g := &gen{}
	g.reseed(seed)
	return g
}

// reseed switches to fresh random sequences, as a resumed session does
// when it stops replaying and starts writing new lines.
func (g *gen) reseed(seed uint64) {
	g.r = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	g.b = rand.New(rand.NewPCG(^seed, seed^0x2545f4914f6cdd1d))
}

func (g *gen) intn(n int) int         { return g.r.IntN(n) }
func (g *gen) chance(p float64) bool  { return g.r.Float64() < p }
func (g *gen) between(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }
func (g *gen) pick(s []string) string { return s[g.r.IntN(len(s))] }

// logUniform returns a size between lo and hi whose logarithm is uniform:
// many small values, a long tail of large ones, as in real transcripts.
func (g *gen) logUniform(lo, hi int) int {
	l, h := math.Log(float64(lo)), math.Log(float64(hi))
	return int(math.Exp(l + g.r.Float64()*(h-l)))
}

const hexDigits = "0123456789abcdef"
const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// uuid returns a random version-4 UUID.
func (g *gen) uuid() string {
	var b [36]byte
	x, y := g.r.Uint64(), g.r.Uint64()
	x = x&^(0xf<<12) | 4<<12 // version nibble
	y = y&^(0x3<<62) | 2<<62 // variant bits
	fillUUID(&b, x, y)
	return string(b[:])
}

// uuid7 returns a version-7 UUID whose first 48 bits are t in Unix ms,
// as Codex thread ids are.
func (g *gen) uuid7(t time.Time) string {
	var b [36]byte
	x := uint64(t.UnixMilli())<<16 | 7<<12 | g.r.Uint64()&0xfff
	y := g.r.Uint64()&^(0x3<<62) | 2<<62
	fillUUID(&b, x, y)
	return string(b[:])
}

func fillUUID(b *[36]byte, x, y uint64) {
	j := 0
	for i := 0; i < 32; i++ {
		if i == 8 || i == 12 || i == 16 || i == 20 {
			b[j] = '-'
			j++
		}
		var nib uint64
		if i < 16 {
			nib = x >> (60 - 4*uint(i)) & 0xf
		} else {
			nib = y >> (60 - 4*uint(i-16)) & 0xf
		}
		b[j] = hexDigits[nib]
		j++
	}
}

// hex returns n random lower-case hex digits.
func (g *gen) hex(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = hexDigits[g.r.IntN(16)]
	}
	return string(b)
}

// token returns prefix followed by n random base62 characters, the shape
// of Anthropic message, request and tool-use ids.
func (g *gen) token(prefix string, n int) string {
	b := make([]byte, len(prefix), len(prefix)+n)
	copy(b, prefix)
	for range n {
		b = append(b, base62[g.r.IntN(len(base62))])
	}
	return string(b)
}

// text appends n bytes of JSON-escaped text of the given style to dst.
// n counts escaped bytes, exactly as they appear in the line. Zero n
// draws nothing from the random source.
func (g *gen) text(dst []byte, n int, style textStyle) []byte {
	if n <= 0 {
		return dst
	}
	end := len(dst) + n
	pool := fragments[style]
	for {
		f := pool[g.b.IntN(len(pool))]
		if len(dst)+len(f) > end {
			break
		}
		dst = append(dst, f...)
	}
	for len(dst) < end { // fill the rest with plain ASCII, never a lone '\'
		dst = append(dst, "etaoinshrdlu "[g.b.IntN(13)])
	}
	return dst
}

// base64Body appends n bytes of standard base64 (n rounded down to a
// multiple of 4) encoding random data, the body of an image block.
func (g *gen) base64Body(dst []byte, n int) []byte {
	n &^= 3
	raw := n / 4 * 3
	if cap(g.tmp) < raw {
		g.tmp = make([]byte, raw)
	}
	src := g.tmp[:raw]
	for i := 0; i < raw; i += 8 {
		v := g.b.Uint64()
		for k := 0; k < 8 && i+k < raw; k++ {
			src[i+k] = byte(v >> (8 * k))
		}
	}
	if raw >= 8 { // a PNG signature, as a real screenshot starts
		copy(src, "\x89PNG\r\n\x1a\n")
	}
	start := len(dst)
	dst = append(dst, make([]byte, base64.StdEncoding.EncodedLen(raw))...)
	base64.StdEncoding.Encode(dst[start:], src)
	return dst
}

// appendStr appends s as a JSON string, escaping '"', '\' and control
// characters and leaving other UTF-8 raw, as JSON.stringify does.
func appendStr(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		case c < utf8.RuneSelf:
			dst = append(dst, c)
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
			continue
		}
		i++
	}
	return append(dst, '"')
}

// appendTime appends t as a JSON string in the ISO-8601 UTC form with
// milliseconds that all three formats use.
func appendTime(dst []byte, t time.Time) []byte {
	dst = append(dst, '"')
	dst = t.UTC().AppendFormat(dst, "2006-01-02T15:04:05.000Z")
	return append(dst, '"')
}
