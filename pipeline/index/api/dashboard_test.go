package api_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/indextest"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/api"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
)

// mustFetch sends a request with an optional token and returns the
// answer with its body read.
func mustFetch(tb testing.TB, srv *httptest.Server, method, path, token string, header http.Header) (*http.Response, string) {
	tb.Helper()
	req, err := http.NewRequestWithContext(tb.Context(), method, srv.URL+path, nil)
	require.NoError(tb, err)
	for k, vs := range header {
		req.Header[k] = vs
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(tb, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(tb, err)
	return resp, string(body)
}

// mustHeader returns a header of the answer to GET path (no token).
func mustHeader(tb testing.TB, srv *httptest.Server, path, name string) string {
	tb.Helper()
	resp, _ := mustFetch(tb, srv, http.MethodGet, path, "", nil)
	return resp.Header.Get(name)
}

var (
	scriptRE    = regexp.MustCompile(`(?is)<script\b[^>]*>(.*?)</script\s*>`)
	styleRE     = regexp.MustCompile(`(?is)<style\b[^>]*>(.*?)</style\s*>`)
	resourceRE  = regexp.MustCompile(`(?i)\b(?:src|href|action|srcset|poster|data)\s*=\s*["']?([^"'\s>]*)`)
	cssURLRE    = regexp.MustCompile(`url\(\s*['"]?([^'")]*)`)
	inlineRE    = regexp.MustCompile(`(?i)<[a-z][^>]*\s(on[a-z]+|style)\s*=`)
	apiPathRE   = regexp.MustCompile(`['"](/api/[^'"?]*)['"]`)
	groupByRE   = regexp.MustCompile(`(?s)<select id="by">(.*?)</select>`)
	optionValRE = regexp.MustCompile(`<option value="([^"]+)"`)
)

func sha256CSP(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// The dashboard at / is a static page served without a token, with a
// strict policy; it loads nothing from elsewhere, every API path its
// script fetches answers 200 on a live indexer, and its script parses.
func TestIndexer_Dashboard(t *testing.T) {
	t.Parallel()
	files := indextest.ReadFiles(t, "../../../testdata/corpus")
	js := indextest.NewStream(t, bus.StreamConfig{})
	last := indextest.Publish(t, js, indextest.Interleave(files, rand.New(rand.NewPCG(7, 7))))
	ix, _ := indextest.RunIndexer(t, index.IndexerConfig{JS: js, Dir: t.TempDir(), Pricer: price.Default(), CommitInterval: 10 * time.Millisecond})
	indextest.WaitApplied(t, ix, last)
	const token = "s3cret"
	srv := httptest.NewServer(api.Handler(ix, api.Config{Token: token}))
	defer srv.Close()

	resp, page := mustFetch(t, srv, http.MethodGet, "/", "", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "the page needs no token")
	var scripts []string // the inline ones; the chart library comes from /assets/
	for _, m := range scriptRE.FindAllStringSubmatch(page, -1) {
		if strings.TrimSpace(m[1]) != "" {
			scripts = append(scripts, m[1])
		}
	}
	require.Len(t, scripts, 1)
	script := scripts[0]

	t.Run("Headers", func(t *testing.T) {
		for _, path := range []string{"/", "/index.html"} {
			resp, body := mustFetch(t, srv, http.MethodGet, path, "", nil)
			require.Equal(t, http.StatusOK, resp.StatusCode, path)
			require.Equal(t, page, body, path)
			require.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"), path)
			require.Equal(t, "no-cache", resp.Header.Get("Cache-Control"), path)
			require.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"), path)
			require.Equal(t, "no-referrer", resp.Header.Get("Referrer-Policy"), path)
			csp := resp.Header.Get("Content-Security-Policy")
			require.Contains(t, csp, "default-src 'self'", path)
			require.NotContains(t, csp, "unsafe-inline", "inline code runs by hash only")
			require.NotContains(t, csp, "unsafe-eval")
			require.Contains(t, csp, "script-src 'self' "+sha256CSP(script)+";", "the policy lists the served script's hash")
			for _, m := range styleRE.FindAllStringSubmatch(page, -1) {
				require.Contains(t, csp, sha256CSP(m[1]), "the policy lists the served style's hash")
			}
		}
		resp, body := mustFetch(t, srv, http.MethodGet, "/", "", http.Header{"If-None-Match": {resp.Header.Get("ETag")}})
		require.Equal(t, http.StatusNotModified, resp.StatusCode)
		require.Empty(t, body)
	})

	t.Run("TokenStillGuardsTheAPI", func(t *testing.T) {
		var e map[string]string
		require.Equal(t, http.StatusUnauthorized, indextest.GetJSON(t, srv, "/api/sessions", "", &e))
		require.Equal(t, http.StatusUnauthorized, indextest.GetJSON(t, srv, "/api/usage", "", &e))
		resp, _ := mustFetch(t, srv, http.MethodPost, "/", "", nil)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "only GET and HEAD of the page are public")
	})

	t.Run("Head", func(t *testing.T) {
		for _, path := range []string{"/", "/index.html"} {
			resp, body := mustFetch(t, srv, http.MethodHead, path, "", nil)
			require.Equal(t, http.StatusOK, resp.StatusCode, path)
			require.Empty(t, body, path)
			require.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"), path)
			require.Equal(t, int64(len(page)), resp.ContentLength, path)
			require.NotEmpty(t, resp.Header.Get("Content-Security-Policy"), path)
		}
	})

	t.Run("UnknownPaths", func(t *testing.T) {
		for _, path := range []string{"/nope", "/index.htm", "/index.html/x", "/api", "/dashboard/index.html"} {
			var e map[string]string
			require.Equal(t, http.StatusUnauthorized, indextest.GetJSON(t, srv, path, "", &e), path)
			require.Equal(t, http.StatusNotFound, indextest.GetJSON(t, srv, path, token, &e), path)
			require.Contains(t, e["error"], "no such endpoint", path)
		}
		var e map[string]string
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusNotFound, resp.StatusCode)
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
	})

	t.Run("NothingTheCSPWouldBlock", func(t *testing.T) {
		markup := scriptRE.ReplaceAllString(page, "")
		require.Empty(t, inlineRE.FindAllString(markup, -1), "inline handlers and style attributes do not run under the policy")
	})

	t.Run("TextOnlyDOM", func(t *testing.T) {
		for _, sink := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "Function(", "setAttribute('style'"} {
			require.NotContains(t, script, sink, "data goes into the DOM as text only")
		}
	})

	t.Run("SameOriginOnly", func(t *testing.T) {
		lower := strings.ToLower(page)
		require.NotContains(t, lower, "http://")
		require.NotContains(t, lower, "https://")
		require.NotContains(t, lower, "@import")
		var refs []string
		for _, m := range resourceRE.FindAllStringSubmatch(page, -1) {
			refs = append(refs, m[1])
		}
		for _, m := range cssURLRE.FindAllStringSubmatch(page, -1) {
			refs = append(refs, m[1])
		}
		require.NotEmpty(t, refs, "the favicon link at least")
		for _, ref := range refs {
			require.NotContains(t, ref, "//", "resource %q", ref)
			u, err := url.Parse(ref)
			require.NoError(t, err, ref)
			require.True(t, u.Scheme == "" || u.Scheme == "data", "resource %q: relative or inline only", ref)
		}
	})

	t.Run("EveryAPIPathAnswers", func(t *testing.T) {
		all, err := ix.Sessions()
		require.NoError(t, err)
		s := slices.MaxFunc(all, func(x, y index.Session) int { return int(x.Turns - y.Turns) })
		now := time.Now().UTC()
		today := now.Format(time.DateOnly)
		hourAgo := now.Add(-time.Hour).Format("2006-01-02T15:04:05.000Z07:00") // as toISOString writes it
		// What the script asks for, path by path, as it builds the requests.
		requests := map[string][]string{
			"/api/sessions": {"/api/sessions?limit=25&tz=Europe%2FBerlin&since=" + today + "&until=" + today + "&sort=cost_usd&q=a",
				"/api/sessions?since=" + url.QueryEscape(hourAgo) + "&limit=200",
				"/api/sessions?parent=" + url.QueryEscape(s.SessionID) + "&format=" + string(s.Format) + "&host=" + url.QueryEscape(s.Host) + "&limit=100"},
			"/api/sessions/": {"/api/sessions/" + url.PathEscape(s.SessionID) + "?format=" + string(s.Format) + "&host=" + url.QueryEscape(s.Host),
				"/api/sessions/" + url.PathEscape(s.SessionID) + "?format=" + string(s.Format),
				"/api/sessions/" + url.PathEscape(s.SessionID)},
			"/api/usage": {"/api/usage?group_by=day&tz=America%2FNew_York",
				"/api/usage?group_by=model&bucket=day&tz=Asia%2FKolkata&since=" + now.AddDate(0, 0, -6).Format(time.DateOnly) + "&until=" + today,
				"/api/usage?group_by=host&bucket=hour&tz=UTC&since=" + today + "&until=" + today},
			"/api/alerts": {"/api/alerts?limit=500"},
			"/api/events": {"/api/events"},
		}
		var paths []string
		for _, m := range apiPathRE.FindAllStringSubmatch(script, -1) {
			if !slices.Contains(paths, m[1]) {
				paths = append(paths, m[1])
			}
		}
		var want []string
		for p := range requests {
			want = append(want, p)
		}
		require.ElementsMatch(t, want, paths, "the API paths the script uses")
		for _, p := range paths {
			for _, path := range requests[p] {
				if p == "/api/events" {
					ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
					req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
					require.NoError(t, err)
					req.Header.Set("Authorization", "Bearer "+token)
					resp, err := srv.Client().Do(req)
					require.NoError(t, err)
					require.Equal(t, http.StatusOK, resp.StatusCode, path)
					require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
					line, err := bufio.NewReader(resp.Body).ReadString('\n')
					require.NoError(t, err)
					require.True(t, strings.HasPrefix(line, ":"), line)
					cancel()
					resp.Body.Close()
					continue
				}
				var v map[string]any
				require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, path, token, &v), path)
			}
		}
		var detail struct {
			Session index.Session `json:"session"`
			Turns   []index.Turn  `json:"turns"`
		}
		require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, requests["/api/sessions/"][0], token, &detail))
		require.NotEmpty(t, detail.Turns, "the detail shows turns")

		// Every group_by the usage select offers, a label as the text
		// input makes it.
		m := groupByRE.FindStringSubmatch(page)
		require.NotNil(t, m, "the group_by select")
		var groups []string
		for _, o := range optionValRE.FindAllStringSubmatch(m[1], -1) {
			g := o[1]
			if g == "label" {
				g = "label:team"
			}
			groups = append(groups, g)
			var v map[string]any
			path := "/api/usage?group_by=" + url.QueryEscape(g) + "&bucket=day&since=" + today
			require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, path, token, &v), path)
		}
		require.ElementsMatch(t, []string{"model", "host", "project", "format", "label:team"}, groups)
	})

	t.Run("SessionAddress", func(t *testing.T) {
		// A session's own address serves the page (no token: it holds no
		// data), with a base so that its relative addresses resolve
		// against the root; an id holding a '/' is one escaped segment.
		for _, id := range []string{"abc", "a%2Fb"} {
			resp, body := mustFetch(t, srv, http.MethodGet, "/sessions/"+id+"?format=claude-code&host=h", "", nil)
			require.Equal(t, http.StatusOK, resp.StatusCode, id)
			require.Contains(t, body, `<base href="../">`)
			require.Equal(t, strings.Replace(page, "<head>", "<head>\n<base href=\"../\">", 1), body, "the same page")
			require.Equal(t, resp.Header.Get("Content-Security-Policy"), mustHeader(t, srv, "/", "Content-Security-Policy"))
			require.Contains(t, resp.Header.Get("Content-Security-Policy"), "base-uri 'self'")
		}
		resp, _ := mustFetch(t, srv, http.MethodGet, "/sessions/", "", nil)
		require.Equal(t, http.StatusNotFound, resp.StatusCode, "no id: not the page")
	})

	t.Run("Assets", func(t *testing.T) {
		for path, ctype := range map[string]string{"/assets/uplot.min.js": "text/javascript; charset=utf-8", "/assets/uplot.min.css": "text/css; charset=utf-8",
			"/assets/uplot.LICENSE": "text/plain; charset=utf-8"} {
			resp, body := mustFetch(t, srv, http.MethodGet, path, "", nil)
			require.Equal(t, http.StatusOK, resp.StatusCode, path)
			require.Equal(t, ctype, resp.Header.Get("Content-Type"), path)
			require.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"), path)
			require.NotEmpty(t, body, path)
			tag := resp.Header.Get("ETag")
			require.Regexp(t, `^"[A-Za-z0-9_-]{16}"$`, tag, path)
			require.Equal(t, "no-cache", resp.Header.Get("Cache-Control"), "%s without its tag: revalidated", path)
			resp, body = mustFetch(t, srv, http.MethodGet, path, "", http.Header{"If-None-Match": {tag}})
			require.Equal(t, http.StatusNotModified, resp.StatusCode, path)
			require.Empty(t, body, path)
			if !strings.HasSuffix(path, ".LICENSE") {
				versioned := strings.TrimPrefix(path, "/") + "?v=" + strings.Trim(tag, `"`)
				require.Contains(t, page, `"`+versioned+`"`, "the page loads it, relative to its root, at its tagged address")
				resp, _ = mustFetch(t, srv, http.MethodGet, "/"+versioned, "", nil)
				require.Equal(t, http.StatusOK, resp.StatusCode, versioned)
				require.Equal(t, "public, max-age=31536000, immutable", resp.Header.Get("Cache-Control"), versioned)
				resp, _ = mustFetch(t, srv, http.MethodGet, path+"?v=old", "", nil)
				require.Equal(t, "no-cache", resp.Header.Get("Cache-Control"), "another tag: revalidated")
			}
		}
		resp, _ := mustFetch(t, srv, http.MethodGet, "/assets/nope.js", "", nil)
		require.Equal(t, http.StatusNotFound, resp.StatusCode)
		require.Contains(t, mustHeader(t, srv, "/", "Content-Security-Policy"), "script-src 'self' ", "the library is admitted as same-origin")
	})

	t.Run("ScriptParses", func(t *testing.T) {
		node, err := exec.LookPath("node")
		if err != nil {
			t.Skip("node is not on PATH: the dashboard script's syntax is not checked")
		}
		file := filepath.Join(t.TempDir(), "dashboard.js")
		require.NoError(t, os.WriteFile(file, []byte(script), 0o600))
		out, err := exec.CommandContext(t.Context(), node, "--check", file).CombinedOutput()
		require.NoError(t, err, "node --check: %s", out)
	})
}
