package api

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
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

// The charting library, uPlot (MIT), vendored from npm at development
// time (dashboard/package.json, package-lock.json, vendor.sh) and served
// at /assets/ from the binary: no CDN, no npm at build time.
//
//go:embed dashboard/vendor/uplot.min.js dashboard/vendor/uplot.min.css dashboard/vendor/uplot.LICENSE
var dashboardVendor embed.FS

// dashboardAssets serves the vendored files under /assets/, each with an
// ETag of its content. The page asks for them at an address carrying
// that tag (assets/uplot.min.js?v=<tag>, see versionAssets): such a
// request is cached for a year as immutable (a new build that changes a
// file changes its address); one without the current tag is revalidated
// on every use (304 while the file is the same).
func dashboardAssets() http.Handler {
	sub, err := fs.Sub(dashboardVendor, "dashboard/vendor")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	tags := assetTags(sub)
	files := http.StripPrefix("/assets/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-cache")
		if tag, ok := tags[strings.TrimPrefix(r.URL.Path, "/assets/")]; ok {
			h.Set("ETag", `"`+tag+`"`)
			if r.URL.Query().Get("v") == tag {
				h.Set("Cache-Control", "public, max-age=31536000, immutable")
			}
		}
		if strings.HasSuffix(r.URL.Path, ".LICENSE") {
			h.Set("Content-Type", "text/plain; charset=utf-8")
		}
		files.ServeHTTP(w, r)
	})
}

// assetTags are the vendored files' tags by name: a hash of the content.
func assetTags(files fs.FS) map[string]string {
	tags := make(map[string]string)
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	for _, e := range entries {
		b, err := fs.ReadFile(files, e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(b)
		tags[e.Name()] = base64.RawURLEncoding.EncodeToString(sum[:12])
	}
	return tags
}

// versionAssets gives the page's addresses of the vendored files their
// tag ("assets/uplot.min.js" becomes "assets/uplot.min.js?v=<tag>").
func versionAssets(page string) string {
	sub, err := fs.Sub(dashboardVendor, "dashboard/vendor")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	for name, tag := range assetTags(sub) {
		page = strings.ReplaceAll(page, `"assets/`+name+`"`, `"assets/`+name+`?v=`+tag+`"`)
	}
	return page
}

// sessionPage is the page served at /sessions/{id}: the dashboard with a
// <base href="../"> so that its relative addresses (assets, API) resolve
// against the dashboard's root, behind a proxy's path prefix too. The
// script reads the session from its own address.
func sessionPage(page string) string {
	return strings.Replace(page, "<head>", `<head>
<base href="../">`, 1)
}

// The blocks of the page whose hashes the policy lists: group 1 is the
// opening tag's attributes, group 2 the inline text. A script with a src
// attribute (the vendored chart library) is admitted by 'self', not by
// hash.
var (
	scriptBlock = regexp.MustCompile(`(?is)<script\b([^>]*)>(.*?)</script\s*>`)
	styleBlock  = regexp.MustCompile(`(?is)<style\b([^>]*)>(.*?)</style\s*>`)
	srcAttr     = regexp.MustCompile(`(?i)\ssrc\s*=`)
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
			if srcAttr.MatchString(m[1]) {
				continue
			}
			// A browser hashes the parsed text, whose line ends are
			// LF whatever the file has (a CRLF checkout).
			text := strings.ReplaceAll(strings.ReplaceAll(m[2], "\r\n", "\n"), "\r", "\n")
			sum := sha256.Sum256([]byte(text))
			hs = append(hs, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
		}
		if len(hs) == 0 {
			return "'none'"
		}
		return strings.Join(hs, " ")
	}
	// 'self' admits the vendored files of /assets/ (every other path of
	// the origin answers JSON, text or the page, under nosniff).
	return "default-src 'self'; script-src 'self' " + hashes(scriptBlock) + "; style-src 'self' " + hashes(styleBlock) +
		"; img-src 'self' data:; object-src 'none'; base-uri 'self'; form-action 'none'; frame-ancestors 'none'"
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
