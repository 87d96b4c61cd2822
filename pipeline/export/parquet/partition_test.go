package parquet_test

import (
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/schema"
)

func TestEscapeValue(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"Plain", "laptop-1.example.com", "laptop-1.example.com"},
		{"Empty", "", "NULL"},
		{"LiteralNULL", "NULL", "%4EULL"},
		{"Traversal", "../../etc", "..%2F..%2Fetc"},
		{"Dots", "..", ".."},
		{"HiveSet", `a/b=c%d#e:f'g"h*i?j\k[l]m^n{o`, `a%2Fb%3Dc%25d%23e%3Af%27g%22h%2Ai%3Fj%5Ck%5Bl%5Dm%5En%7Bo`},
		{"Controls", "nul\x00nl\ndel\x7f", "nul%00nl%0Adel%7F"},
		{"UTF8Kept", "hôte-東京 x", "hôte-東京 x"},
		{"InvalidUTF8", "bad\xffhost", "bad%EF%BF%BDhost~" + fnv("bad\xffhost")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := parquet.EscapeValue(tc.in)
			require.Equal(t, tc.want, got, "EscapeValue(%q)", tc.in)
		})
	}
	t.Run("Long", func(t *testing.T) {
		a, b := strings.Repeat("é/", 200)+"a", strings.Repeat("é/", 200)+"b"
		ea, eb := parquet.EscapeValue(a), parquet.EscapeValue(b)
		require.LessOrEqual(t, len(ea), 160)
		require.NotEqual(t, ea, eb, "distinct long values stay distinct")
		require.True(t, strings.HasPrefix(ea, "é%2Fé%2F"))
		require.NotContains(t, ea, "/")
	})
}

// fnv returns the suffix EscapeValue appends: 16 hex digits of FNV-1a.
func fnv(s string) string {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	const hex = "0123456789abcdef"
	b := make([]byte, 16)
	for i := 15; i >= 0; i-- {
		b[i] = hex[h&15]
		h >>= 4
	}
	return string(b)
}

// TestWriter_HostilePartitionValues writes entries whose host and format
// try to escape the output directory or break the layout: every file
// stays three directories below the root, and DuckDB with
// hive_partitioning gives the original values back (it un-escapes %XX;
// "NULL" is its NULL).
func TestWriter_HostilePartitionValues(t *testing.T) {
	hosts := []string{"../../etc", "a/b", "x=y", "50%", "nul\x00byte", "line\nbreak", "NULL", "", "..", "host=h/date=d",
		"hôte 東京", `q"u'o*t?e#s:[]^{}\`}
	dir := filepath.Join(t.TempDir(), "out")
	var entries []schema.Entry
	for i, h := range hosts {
		entries = append(entries, schema.Entry{Format: schema.Format("../fmt"), Host: h, SessionID: "s", EntryID: h,
			Kind: schema.KindEvent, TS: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(i) * 24 * time.Hour)})
	}
	entries = append(entries, schema.Entry{Format: schema.FormatPi, Host: "no-ts", SessionID: "s", EntryID: "no-ts", Kind: schema.KindEvent})
	writeAll(t, mustWriter(t, parquet.Config{Dir: dir}), entries)

	// Nothing outside dir; every part file three levels down.
	parent := filepath.Dir(dir)
	top, err := os.ReadDir(parent)
	require.NoError(t, err)
	require.Len(t, top, 1, "only the output directory in its parent")
	_, parts := scan(t, dir)
	require.Len(t, parts, len(entries))
	for _, p := range parts {
		el := strings.Split(p, "/")
		require.Len(t, el, 4, p)
		require.True(t, strings.HasPrefix(el[0], "format="), p)
		require.True(t, strings.HasPrefix(el[1], "date="), p)
		require.True(t, strings.HasPrefix(el[2], "host="), p)
	}

	rows, err := openDuckDB(t).Query(`SELECT entry_id, format, host, CAST(date AS VARCHAR) FROM ` + glob(dir))
	require.NoError(t, err)
	got := map[string][3]sql.NullString{}
	for rows.Next() {
		var id string
		var v [3]sql.NullString
		require.NoError(t, rows.Scan(&id, &v[0], &v[1], &v[2]))
		got[id] = v
	}
	require.NoError(t, rows.Err())
	require.Len(t, got, len(entries))
	for _, e := range entries {
		v := got[e.EntryID]
		require.Equal(t, string(e.Format), v[0].String, "format of %q", e.EntryID)
		require.Equal(t, e.Host, v[1].String, "host %q", e.Host)
		require.Equal(t, e.Host != "", v[1].Valid, "empty host is NULL")
		if e.TS.IsZero() {
			require.False(t, v[2].Valid, "no ts: NULL date")
		} else {
			require.Equal(t, e.TS.Format(time.DateOnly), v[2].String)
		}
	}
}

// hashSuffix ends a value EscapeValue replaced or cut.
var hashSuffix = regexp.MustCompile(`~[0-9a-f]{16}$`)

// FuzzEscapeValue: whatever the value, its escaped form is one path
// element of valid UTF-8 (no '/', '\\', NUL), at most
// 160 bytes; and a valid UTF-8 value that fits and is not "NULL"
// un-escapes (as DuckDB does, %XX) to itself.
func FuzzEscapeValue(f *testing.F) {
	for _, s := range []string{"", "laptop", "../../etc", "a/b=c%d", "NULL", "nul\x00", "bad\xff", "hôte 東京", ".", "..", strings.Repeat("é/", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got := parquet.EscapeValue(v)
		require.NotEmpty(t, got)
		require.NotContains(t, got, "/")
		require.NotContains(t, got, "\\")
		require.NotContains(t, got, "\x00")
		require.True(t, utf8.ValidString(got), "EscapeValue(%q) = %q", v, got)
		require.LessOrEqual(t, len(got), 160)
		if v == "" {
			require.Equal(t, parquet.NullValue, got)
			return
		}
		if !utf8.ValidString(v) {
			require.Regexp(t, hashSuffix, got, "replaced: suffixed with a hash")
			return
		}
		back, err := url.PathUnescape(got)
		if err != nil || back != v {
			// Cut to fit (or replaced): suffixed with a hash, whatever
			// the value held ("~" included).
			require.Regexp(t, hashSuffix, got, "EscapeValue(%q) = %q", v, got)
		}
	})
}
