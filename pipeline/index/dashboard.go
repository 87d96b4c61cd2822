package index

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// The dashboard: GET / (and /index.html) serves one static page,
// dashboard/index.html, with its style sheet and script inline and no
// data in it; the script reads the JSON API and /api/events like any
// other client, with the bearer token the user types in when the API
// answers 401. The page itself needs no token.
//
// The page loads nothing from elsewhere. Its Content-Security-Policy
// allows only its own origin, and runs only the inline script and style
// whose SHA-256 hashes it lists: the hashes are computed from the
// embedded page when the handler is built, so they follow every edit of
// the page, and an injected <script> or style="" attribute would not
// run. (The script sets widths through the CSSOM, which style-src does
// not restrict.)

//go:embed dashboard/index.html
var dashboardPage string

// The inline blocks of the page whose hashes the policy lists.
var (
	scriptBlock = regexp.MustCompile(`(?is)<script\b[^>]*>(.*?)</script\s*>`)
	styleBlock  = regexp.MustCompile(`(?is)<style\b[^>]*>(.*?)</style\s*>`)
)

// dashboard serves the page with its security headers.
type dashboard struct {
	page string
	csp  string
	etag string
}

func newDashboard(page string) *dashboard {
	sum := sha256.Sum256([]byte(page))
	return &dashboard{page: page, csp: dashboardCSP(page), etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`}
}

// dashboardCSP is the Content-Security-Policy of page: same origin only,
// no plugins, frames or form posts, and only the page's own inline
// scripts and styles, by hash.
func dashboardCSP(page string) string {
	hashes := func(re *regexp.Regexp) string {
		var hs []string
		for _, m := range re.FindAllStringSubmatch(page, -1) {
			// A browser hashes the parsed text, whose line ends are
			// LF whatever the file has (a CRLF checkout).
			text := strings.ReplaceAll(strings.ReplaceAll(m[1], "\r\n", "\n"), "\r", "\n")
			sum := sha256.Sum256([]byte(text))
			hs = append(hs, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
		}
		if len(hs) == 0 {
			return "'none'"
		}
		return strings.Join(hs, " ")
	}
	return "default-src 'self'; script-src " + hashes(scriptBlock) + "; style-src " + hashes(styleBlock) +
		"; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

// ServeHTTP answers GET and HEAD, with 304 for a page the client has.
func (d *dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Security-Policy", d.csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("ETag", d.etag)
	http.ServeContent(w, r, "index.html", time.Time{}, strings.NewReader(d.page))
}
