package duckdb

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/price"
)

// ViewConfig configures [DuckDBScript].
type ViewConfig struct {
	// Dir is the output root of an [parquet.Writer]: the views read every
	// *.parquet file below it. It is written into the script as it is; a
	// relative Dir is resolved by DuckDB against its working directory.
	Dir string

	// Prices is the price table the script embeds to price calls without
	// a recorded cost; nil means [price.Default]. Pass the table the Go
	// aggregates are computed with (`sessionpipe sessions -prices FILE`
	// merges a file over the default) to get the same costs.
	Prices *price.Table

	// Manifest reads the files the manifest (<Dir>/_manifest.jsonl) lists,
	// as it is when the script runs, instead of globbing Dir: only
	// committed files, none a writer or a compaction is about to list or
	// remove (for a bucket, see views_s3.go).
	Manifest bool

	// S3, when set, starts the script with DuckDB's httpfs settings and a
	// secret for Dir in a bucket.
	S3 *DuckDBS3

	// Empty says that Dir holds no Parquet file yet (a data directory
	// the exporter has not committed to): DuckDB refuses a view over a
	// glob that matches nothing, so the views are defined over no rows,
	// with the columns and types the files will have. Run the script
	// again once a file is committed.
	Empty bool
}

// DuckDBScript returns a DuckDB SQL script, plain statements only, that
// defines temporary views over the Parquet files under cfg.Dir; run it
// with `duckdb -init FILE`, or send it through any DuckDB client. The
// views compute what the live indexer and `sessionpipe sessions` compute
// (DESIGN.md's aggregates, package pipeline/index), in SQL:
//
//   - entries: every row of every file, read with
//     read_parquet('<dir>/**/*.parquet', hive_partitioning=true,
//     union_by_name=true), one row per entry key: an entry a tailer
//     re-sent past the stream's duplicate window is in the files twice,
//     and the row with the lowest seq is kept.
//   - api_calls: one row per usage_key with a non-zero token total: the
//     occurrence with the largest total, in the session that wins it by
//     the aggregator's rules (main transcript before a sidechain replay,
//     not of a background session before a background session's replay,
//     earlier timestamp, session created first, then position), copies
//     counting nothing; with its tokens and cost.
//   - sessions: one row per session holding a conversation, with the
//     counters of index.Session (turns, messages, API calls, tool calls
//     and errors, the four token counters and their total, cost, models,
//     compactions, subagents) and its host, cwd, first and last ts,
//     parent session, title and slug.
//   - prices (a table): the price table, one row per model key and dated
//     period, with the rates its row resolves to, its source and lookup
//     layer, as the script embeds it.
//
// Helper macros and tables are named sessionpipe_*. Everything is created
// with CREATE OR REPLACE TEMP, so that running the script again replaces
// it and a database file opened with it is left unchanged. The views read
// the files at each query; while no file matches, DuckDB refuses to
// create entries and the views built on it.
//
// Costs are those of the Go code to the nano-dollar: each call's price
// and price_source follow [price.Table.PriceEntry] (an override's row, a
// recorded cost_usd above 0 as is, 0 for a local runtime, else the
// table's row at the call's time), computed with the same float64
// operations in the same order, rounded to nano-dollars per call, and
// summed as integers. docs/duckdb.md lists the few places
// where the SQL cannot see what the Go aggregator sees.
//
// cfg.Dir is quoted as a SQL string and the glob characters in it (*, ?,
// [) are escaped, so that any directory name is read literally. DuckDB
// cannot glob a backslash literally: a Dir holding one is globbed with
// "?" in its place and the files are then filtered by name.
func DuckDBScript(cfg ViewConfig) string {
	t := cfg.Prices
	if t == nil {
		t = price.Default()
	}
	var b strings.Builder
	b.WriteString("-- sessionpipe duckdb: views over the Parquet files of a sessionpipe export.\n")
	b.WriteString("-- Generated; see docs/duckdb.md. Views entries, api_calls and sessions; table prices.\n\n")
	writeS3Secret(&b, cfg.S3, cfg.Dir)
	b.WriteString(macros)
	writePrices(&b, t)
	switch {
	case cfg.Empty:
		writeEmptyEntries(&b, cfg.Dir)
	case cfg.Manifest:
		writeManifestEntries(&b, cfg.Dir)
	default:
		writeEntries(&b, cfg.Dir)
	}
	b.WriteString(derivedViews)
	return b.String()
}

// parquetGlob returns the glob of every Parquet file below dir, with the
// glob characters of dir itself escaped as DuckDB's glob reads them (a
// character class of one). DuckDB's glob cannot match a backslash
// literally (it reads it as a path separator): one is matched by "?",
// and loose then reports that the glob may match other directories too.
func parquetGlob(dir string) (glob string, loose bool) {
	var b strings.Builder
	for _, r := range strings.TrimRight(dir, "/") {
		switch r {
		case '*', '?', '[':
			b.WriteByte('[')
			b.WriteRune(r)
			b.WriteByte(']')
		case '\\':
			b.WriteByte('?')
			loose = true
		default:
			b.WriteRune(r)
		}
	}
	return b.String() + "/**/*.parquet", loose
}

// sqlString quotes s as a SQL string literal: single quotes doubled, no
// other escape (DuckDB reads backslashes literally).
func sqlString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// sqlFloat writes x as a DuckDB DOUBLE literal that parses back to the
// same float64: the shortest exponent form ("3e-06"), which DuckDB reads
// as DOUBLE (a plain decimal would be a DECIMAL).
func sqlFloat(x float64) string {
	return strconv.FormatFloat(x, 'e', -1, 64)
}

// priceRow is one row of the prices table as the script carries it.
type priceRow struct {
	Model     string      `json:"m"`
	From      *int64      `json:"f"`
	Until     *int64      `json:"u"`
	Layer     int         `json:"l"`
	Source    string      `json:"s"`
	Rates     [11]float64 `json:"r"`
	Threshold int64       `json:"t"`
	Whole     bool        `json:"w"`
}

// writePrices writes the prices table: every price t holds
// ([price.Table.Prices]), each model's base price and one row per dated
// period, with the rates its row resolves to (defaults filled, tiers
// built), where it comes from and the lookup layer of its row.
func writePrices(b *strings.Builder, t *price.Table) {
	// The rows travel as one JSON literal: DuckDB binds a VALUES list of
	// thousands of rows slowly (seconds), and parses JSON numbers back to
	// the same float64s (TestDuckDBInit_PriceTable checks every bit).
	all := t.Prices()
	rows := make([]priceRow, 0, len(all))
	for _, p := range all {
		l := &p.Long
		r := priceRow{Model: p.Model, Layer: p.Layer, Source: p.Source,
			Rates: [11]float64{p.Input, p.Output, p.CacheRead, p.CacheWrite5m, p.CacheWrite1h, p.Fast,
				l.Input, l.Output, l.CacheRead, l.CacheWrite5m, l.CacheWrite1h},
			Threshold: l.Threshold, Whole: l.WholeRequest}
		if !p.ValidFrom.IsZero() {
			r.From = new(p.ValidFrom.UnixMicro())
		}
		if !p.ValidUntil.IsZero() {
			r.Until = new(p.ValidUntil.UnixMicro())
		}
		rows = append(rows, r)
	}
	doc, _ := json.Marshal(rows) // plain values: cannot fail
	b.WriteString(`-- The price table (pipeline/price): one row per model key and period (valid_from and
-- valid_until NULL: the base price), resolved rates in USD per token.
CREATE OR REPLACE TEMP TABLE prices AS
SELECT r.m AS model, make_timestamp(r.f) AS valid_from, make_timestamp(r.u) AS valid_until, r.l AS layer,
  r.s AS source, r.r[1] AS input, r.r[2] AS output, r.r[3] AS cache_read, r.r[4] AS cache_write_5m,
  r.r[5] AS cache_write_1h, r.r[6] AS fast, r.t AS long_threshold, r.w AS long_whole_request,
  r.r[7] AS long_input, r.r[8] AS long_output, r.r[9] AS long_cache_read, r.r[10] AS long_cache_write_5m,
  r.r[11] AS long_cache_write_1h
FROM (SELECT unnest(from_json(`)
	b.WriteString(sqlString(string(doc)))
	b.WriteString(`, '[{"m": "VARCHAR", "f": "BIGINT", "u": "BIGINT", "l": "INTEGER", "s": "VARCHAR",
  "r": "DOUBLE[]", "t": "BIGINT", "w": "BOOLEAN"}]')) AS r);

`)
	b.WriteString(`-- The keys by normalised spelling in each lookup layer (price.Table.Lookup, step 3); a spelling
-- two keys of a layer share names neither.
CREATE OR REPLACE TEMP TABLE sessionpipe_norm_prices AS
SELECT layer, sessionpipe_norm(model) AS k, any_value(model) AS model
FROM prices
WHERE valid_from IS NULL AND valid_until IS NULL AND sessionpipe_norm(model) IS NOT NULL
GROUP BY ALL
HAVING count(*) = 1;

`)
	fmt.Fprintf(b, "-- nanoUSD's cap (math.MaxInt64/1e9 as a float64).\nCREATE OR REPLACE TEMP MACRO sessionpipe_max_usd() AS %s;\n\n", sqlFloat(math.MaxInt64/1e9))
	quoted := make([]string, 0, len(price.LocalProviders()))
	for _, p := range price.LocalProviders() {
		quoted = append(quoted, sqlString(p))
	}
	fmt.Fprintf(b, `-- price.Local: a call through a local runtime costs 0 by rule, but Ollama's cloud models.
CREATE OR REPLACE TEMP MACRO sessionpipe_local(provider, model) AS
  lower(coalesce(provider, '')) IN (%s)
  AND NOT (lower(coalesce(model, '')) LIKE '%%-cloud' OR lower(coalesce(model, '')) LIKE '%%:cloud');

`, strings.Join(quoted, ", "))
}

// macros are the name normalisation of price.Table.Lookup, step by step.
const macros = `-- price.Table.Lookup's normalised spelling: ASCII upper case folded, '.' and '@' read as '-',
-- a trailing [bracket] suffix removed, leading provider paths removed (names over 256 bytes: none).
CREATE OR REPLACE TEMP MACRO sessionpipe_norm(name) AS
  CASE WHEN strlen(name) <= 256 THEN
    regexp_replace(
      regexp_replace(
        translate(name, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ.@', 'abcdefghijklmnopqrstuvwxyz--'),
        '^(.+)\[[^\[]*\]$', '\1'),
      '^((anthropic|openai|bedrock|vertex_ai|openrouter)/)+(.+)$', '\3')
  END;

-- A trailing release date, -YYYYMMDD or -YYYY-MM-DD, removed.
CREATE OR REPLACE TEMP MACRO sessionpipe_strip_date(n) AS
  CASE
    WHEN regexp_matches(n, '^.+-[0-9]{8}$') THEN regexp_replace(n, '^(.+)-[0-9]{8}$', '\1')
    ELSE regexp_replace(n, '^(.+)-[0-9]{4}-[0-9]{2}-[0-9]{2}$', '\1')
  END;

-- A trailing Bedrock -vN removed.
CREATE OR REPLACE TEMP MACRO sessionpipe_strip_version(n) AS regexp_replace(n, '^(.+)-v[0-9]+$', '\1');

-- Where "anthropic-claude-" starts in a normalised Bedrock id (0, or after a region), else NULL.
CREATE OR REPLACE TEMP MACRO sessionpipe_anthropic_at(n) AS
  CASE
    WHEN starts_with(n, 'anthropic-claude-') THEN 0
    WHEN regexp_matches(n, '^[a-z]+-anthropic-claude-') THEN strlen(regexp_extract(n, '^[a-z]+-'))
  END;

`

// writeEntries writes the entries view: every row of the files below
// dir, one per entry key.
func writeEntries(b *strings.Builder, dir string) {
	glob, loose := parquetGlob(dir)
	b.WriteString(`-- Every entry once per place it was read from: rows with the same key, file and line are the
-- same entry sent twice (a batch of lines read again after a crash, a lost checkpoint or past
-- the stream's duplicate window); the lowest seq is kept. Copies of a record in other files (a
-- resumed session, an archive) or at other lines of its file (history Claude Code re-appends
-- on a second /compact) are rows of their own: the counting rules read them, as Go does.
CREATE OR REPLACE TEMP VIEW entry_copies AS
`)
	if !loose {
		writeSource(b, fmt.Sprintf("SELECT *\nFROM read_parquet(%s, hive_partitioning = true, union_by_name = true)", sqlString(glob)))
	} else {
		// The glob matches any character where dir has a backslash:
		// keep the files below dir itself.
		writeSource(b, fmt.Sprintf("SELECT * EXCLUDE (filename)\nFROM read_parquet(%s, hive_partitioning = true, union_by_name = true, filename = true)\nWHERE starts_with(filename, %s)",
			sqlString(glob), sqlString(strings.TrimRight(dir, "/")+"/")))
	}
	writeEntriesQualify(b)
}

// writeEntriesQualify ends the entry_copies view and writes entries.
func writeEntriesQualify(b *strings.Builder) {
	b.WriteString("QUALIFY row_number() OVER (PARTITION BY key, host, path, line, object ORDER BY seq) = 1;\n\n")
	b.WriteString(`-- Every entry once: of the rows with the same key (copies in several files), the lowest seq.
CREATE OR REPLACE TEMP VIEW entries AS
SELECT * FROM entry_copies
QUALIFY row_number() OVER (PARTITION BY key ORDER BY seq, line, object, path) = 1;

`)
}

// derivedViews defines api_calls and sessions. Both are one query over
// the chain of common table expressions in aggregation, each
// materialised once per query: views of views would be inlined, and
// planned, once per reference.
var derivedViews = `-- One row per API call (usage_key): the occurrence that counts, with its cost.
CREATE OR REPLACE TEMP VIEW api_calls AS
` + aggregation + `
SELECT
  usage_key, format, host, session_id, ts, date, model, price_model,
  usage.input AS input_tokens, usage.output AS output_tokens,
  usage.cache_read AS cache_read_tokens, usage.cache_write AS cache_write_tokens,
  usage.cache_write_5m AS cache_write_5m_tokens, usage.cache_write_1h AS cache_write_1h_tokens,
  usage.reasoning AS reasoning_tokens, usage.speed AS speed, total AS total_tokens,
  cost_nano_usd, cost_nano_usd / 1e9 AS cost_usd, cost_nano_usd IS NULL AS unpriced, cost_recorded, price_source,
  coalesce(cwd, session_cwd) AS cwd, sidechain, agent_id, labels, path, line, key, seq
FROM calls;

-- One row per session holding a conversation (a message, a compaction or usage), with the
-- aggregates of index.Session.
CREATE OR REPLACE TEMP VIEW sessions AS
` + aggregation + `, counted AS (
  SELECT format, host, session_id,
    count_if(real_input) FILTER (WHERE fact = 'e') AS user_messages,
    count_if(turn) FILTER (WHERE fact = 'e') AS turns,
    sum(n_tool_calls) FILTER (WHERE fact = 'e') AS tool_calls,
    sum(n_tool_errors) FILTER (WHERE fact = 'e') AS tool_errors,
    count_if(main_compaction) FILTER (WHERE fact = 'e') AS compactions,
    count(*) FILTER (WHERE fact = 'r') AS assistant_messages
  FROM winners
  GROUP BY format, host, session_id
), spent AS (
  SELECT format, host, session_id,
    count(*) AS api_calls,
    sum(usage.input) AS input_tokens, sum(usage.output) AS output_tokens,
    sum(usage.cache_read) AS cache_read_tokens, sum(usage.cache_write) AS cache_write_tokens,
    sum(coalesce(cost_nano_usd, 0)) AS cost_nano_usd,
    count_if(cost_nano_usd IS NULL) AS unpriced_calls,
    list_sort(list(DISTINCT model) FILTER (WHERE model IS NOT NULL)) AS models,
    list_sort(list(DISTINCT model) FILTER (WHERE model IS NOT NULL AND cost_nano_usd IS NULL)) AS unpriced_models
  FROM calls
  GROUP BY format, host, session_id
), by_source AS (
  -- The priced calls and their cost by price source (index.Session.PriceSources).
  SELECT format, host, session_id,
    list({'source': price_source, 'calls': calls, 'cost_usd': cost_nano_usd / 1e9} ORDER BY price_source) AS price_sources
  FROM (
    SELECT format, host, session_id, price_source, count(*) AS calls, sum(cost_nano_usd)::BIGINT AS cost_nano_usd
    FROM calls
    WHERE cost_nano_usd IS NOT NULL AND price_source IS NOT NULL
    GROUP BY ALL
  )
  GROUP BY ALL
)
SELECT
  s.session_id, s.format, s.host, s.cwd, s.first_ts, s.last_ts,
  coalesce(f.turns, 0)::BIGINT AS turns,
  coalesce(f.user_messages, 0)::BIGINT AS user_messages,
  coalesce(f.assistant_messages, 0)::BIGINT AS assistant_messages,
  coalesce(c.api_calls, 0)::BIGINT AS api_calls,
  coalesce(f.tool_calls, 0)::BIGINT AS tool_calls,
  coalesce(f.tool_errors, 0)::BIGINT AS tool_errors,
  coalesce(c.input_tokens, 0)::BIGINT AS input_tokens,
  coalesce(c.output_tokens, 0)::BIGINT AS output_tokens,
  coalesce(c.cache_read_tokens, 0)::BIGINT AS cache_read_tokens,
  coalesce(c.cache_write_tokens, 0)::BIGINT AS cache_write_tokens,
  (coalesce(c.input_tokens, 0) + coalesce(c.output_tokens, 0) + coalesce(c.cache_read_tokens, 0)
    + coalesce(c.cache_write_tokens, 0))::BIGINT AS total_tokens,
  coalesce(c.cost_nano_usd, 0)::BIGINT AS cost_nano_usd,
  coalesce(c.cost_nano_usd, 0)::BIGINT / 1e9 AS cost_usd,
  coalesce(c.unpriced_calls, 0)::BIGINT AS unpriced_calls,
  coalesce(c.unpriced_models, []) AS unpriced_models,
  coalesce(ps.price_sources, []) AS price_sources,
  coalesce(c.models, []) AS models,
  coalesce(f.compactions, 0)::BIGINT AS compactions,
  s.subagents,
  s.parent_session_id, s.title, s.slug
FROM info s
LEFT JOIN counted f USING (format, host, session_id)
LEFT JOIN spent c USING (format, host, session_id)
LEFT JOIN by_source ps USING (format, host, session_id)
WHERE s.conversation
ORDER BY s.first_ts NULLS FIRST, s.session_id, s.format, s.host;
`

// aggregation is the chain of common table expressions both derived
// views start with, following pipeline/index: aggregate.go (Add),
// fact.go (the winner of a fact) and session.go (what every entry tells
// about its session). Its last expression, calls, is api_calls' rows
// with the columns of their entries that the views read (the entries'
// text, tool calls and results are not carried: twice as fast, and 40%
// less memory, over a 1 GB history's Parquet).
const aggregation = `WITH
-- The entries of sessions (session_id set), with what the aggregator derives from each.
-- Only the columns the aggregates read: the text, tool inputs and results, raw lines and the
-- rest are never carried through the materialised steps below (a tool call or an error
-- result counts, its content does not).
e0 AS (
  SELECT seq, key, format, host, labels, path, line, object, session_id, entry_id, parent_session_id, ts, date,
    kind, role, meta, copy, model, provider, message_id, usage, usage_key, cost_usd, cwd, sidechain, agent_id,
    title, slug,
    len(tool_calls) + coalesce(tool_calls_omitted, 0) AS n_tool_calls,
    len(list_filter(tool_results, r -> r.is_error)) AS n_tool_errors,
    coalesce(epoch_us(ts), 9223372036854775807) AS ts_key, -- unknown after every known time
    coalesce(epoch_us(ts), 0) AS ts_id,
    coalesce(agent_id, '') AS agent,
    coalesce(path, '') AS file,
    coalesce(background, false) AS bg,
    -- Record ids unique only within a host (index.hostScoped): m4dtimes and Fluux facts are per host.
    CASE WHEN format IN ('m4dtimes', 'fluux') THEN host ELSE '' END AS kh,
    kind = 'message' AND role IS NOT DISTINCT FROM 'user' AND NOT meta AND NOT sidechain AS real_input,
    -- Claude Code's own notices (model '<synthetic>') are no replies (index.isReply).
    kind = 'message' AND role IS NOT DISTINCT FROM 'assistant' AND model IS DISTINCT FROM '<synthetic>'
      AND NOT meta AND NOT sidechain AS assistant,
    kind = 'message' AND model IS DISTINCT FROM '<synthetic>' AS is_message,
    -- A compaction of the conversation: the main transcript's (index.isCompaction).
    kind = 'compaction' AND NOT sidechain AND coalesce(agent_id, '') = '' AS main_compaction
  FROM entry_copies
  WHERE session_id <> ''
),
e AS MATERIALIZED (
  SELECT *,
    -- A real input starts a turn unless the last user input or assistant message before it
    -- in its file (copies included) was a user input. "Before" is in stream order, as the
    -- indexer reads: a file truncated and written again holds offsets that repeat, and its
    -- new lines follow the old ones; the entries of one message (a batch of lines) share its
    -- seq and follow their lines.
    real_input AND NOT copy AND last_value(CASE WHEN real_input OR assistant THEN role END IGNORE NULLS)
      OVER (PARTITION BY host, path ORDER BY seq, line, object
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) IS DISTINCT FROM 'user' AS turn,
    CASE WHEN usage IS NOT NULL THEN usage.input + usage.output + usage.cache_read + usage.cache_write END AS total
  FROM e0
),
-- What every entry tells about its session (session.observe), copies included: choices take
-- the earliest (or latest) by timestamp, unknown last, then position.
info AS MATERIALIZED (
  SELECT format, host, session_id,
    min(ts) AS first_ts,
    max(ts) AS last_ts,
    min(ts) FILTER (WHERE kind = 'session') AS header_ts,
    first(cwd ORDER BY CASE WHEN kind = 'session' THEN 0 WHEN sidechain THEN 2 ELSE 1 END, ts_key, agent, line, object, file)
      FILTER (WHERE cwd IS NOT NULL) AS cwd,
    first(parent_session_id ORDER BY ts_key DESC, agent DESC, line DESC, object DESC, file DESC)
      FILTER (WHERE parent_session_id IS NOT NULL AND parent_session_id <> session_id AND NOT sidechain) AS parent_session_id,
    first(title ORDER BY ts_key DESC, agent DESC, line DESC, object DESC, file DESC) FILTER (WHERE title IS NOT NULL) AS title,
    first(slug ORDER BY ts_key DESC, agent DESC, line DESC, object DESC, file DESC)
      FILTER (WHERE slug IS NOT NULL AND NOT sidechain) AS slug,
    count(DISTINCT agent_id) FILTER (WHERE NOT copy) AS subagents,
    bool_or(is_message OR kind = 'compaction' OR usage_key IS NOT NULL) AS conversation
  FROM e
  GROUP BY format, host, session_id
),
-- Every occurrence of a countable fact (index.Aggregator.Add): an entry that counts something
-- (fact 'e': format, entry_id, ts), an assistant message (fact 'r': the Claude Code message
-- id, else the entry), an API call (fact 'u': usage_key, non-zero total). Copies count nothing.
occurrences AS (
  SELECT 'e' AS fact, format AS k1, '' AS k2, entry_id AS k3, ts_id AS k4, 0::BIGINT AS total, * EXCLUDE (total)
  FROM e
  WHERE NOT copy AND (real_input OR n_tool_calls > 0 OR n_tool_errors > 0 OR main_compaction)
  UNION ALL BY NAME
  SELECT 'r' AS fact, format AS k1,
    CASE WHEN format = 'claude-code' AND message_id IS NOT NULL THEN message_id ELSE '' END AS k2,
    CASE WHEN format = 'claude-code' AND message_id IS NOT NULL THEN '' ELSE entry_id END AS k3,
    CASE WHEN format = 'claude-code' AND message_id IS NOT NULL THEN 0 ELSE ts_id END AS k4,
    0::BIGINT AS total, * EXCLUDE (total)
  FROM e
  WHERE NOT copy AND assistant
  UNION ALL BY NAME
  SELECT 'u' AS fact, usage_key AS k1, '' AS k2, '' AS k3, 0 AS k4, *
  FROM e
  WHERE NOT copy AND usage_key IS NOT NULL AND total > 0
),
-- The occurrence that counts, one per fact (index facts.better): for an API call the largest
-- total; then a main-transcript occurrence before a sidechain replay; then one not of a
-- background session before a background session's replay; then the earlier timestamp
-- (unknown last); then the session created first (index.createdBefore); then the
-- position. First the best occurrence in each session, then those that tie for first place
-- before the session order decides.
top AS MATERIALIZED (
  SELECT o.*,
    coalesce(epoch_us(coalesce(s.header_ts, s.first_ts)), -9223372036854775808) AS s_created,
    coalesce(epoch_us(s.last_ts), -9223372036854775808) AS s_last,
    coalesce(s.parent_session_id, '') AS s_parent
  FROM (
    SELECT * FROM occurrences
    QUALIFY row_number() OVER (PARTITION BY fact, k1, k2, k3, k4, kh, format, host, session_id
                               ORDER BY total DESC, sidechain, bg, ts_key, agent, line, object, file) = 1
  ) o
  JOIN info s USING (format, host, session_id)
  QUALIFY rank() OVER (PARTITION BY fact, k1, k2, k3, k4, kh ORDER BY total DESC, sidechain, bg, ts_key) = 1
),
-- How many other sessions' occurrences beat each one: createdBefore is applied pairwise, as
-- its parent rule is no sort key.
losses AS (
  SELECT x.fact, x.k1, x.k2, x.k3, x.k4, x.kh, x.format, x.host, x.session_id,
    count_if(CASE
      WHEN y.s_created <> x.s_created THEN y.s_created < x.s_created
      WHEN x.s_parent = y.session_id AND x.format = y.format AND x.host = y.host THEN true
      WHEN y.s_parent = x.session_id AND x.format = y.format AND x.host = y.host THEN false
      WHEN y.s_last <> x.s_last THEN y.s_last < x.s_last
      WHEN y.session_id <> x.session_id THEN y.session_id < x.session_id
      WHEN y.format <> x.format THEN y.format < x.format
      ELSE y.host < x.host
    END) AS n
  FROM top x JOIN top y
    ON x.fact = y.fact AND x.k1 = y.k1 AND x.k2 = y.k2 AND x.k3 = y.k3 AND x.k4 = y.k4 AND x.kh = y.kh
   AND NOT (x.format = y.format AND x.host = y.host AND x.session_id = y.session_id)
  GROUP BY ALL
),
winners AS MATERIALIZED (
  SELECT t.* EXCLUDE (s_created, s_last, s_parent)
  FROM top t
  LEFT JOIN losses l USING (fact, k1, k2, k3, k4, kh, format, host, session_id)
  QUALIFY row_number() OVER (PARTITION BY fact, k1, k2, k3, k4, kh
                             ORDER BY coalesce(l.n, 0), s_created, s_last, session_id, format, host) = 1
),
-- The price key each model name resolves to (price.Table.Lookup): the first candidate, in
-- the order of Lookup's steps, that names a row.
names AS (
  SELECT DISTINCT model AS name FROM winners WHERE fact = 'u' AND model IS NOT NULL AND model <> '<synthetic>'
),
bedrock AS (
  SELECT name, n, sessionpipe_anthropic_at(n) AS i, regexp_replace(n, ':[0-9]+$', '') AS rev
  FROM (SELECT name, sessionpipe_norm(name) AS n FROM names)
),
candidates AS (
  SELECT name, 1 AS step, false AS norm, name AS k FROM bedrock
  UNION ALL SELECT name, 2, true, n FROM bedrock WHERE n IS NOT NULL
  UNION ALL SELECT name, 3, false, 'gpt-5.3-codex-spark' FROM bedrock WHERE n = 'gpt-5-3-spark'
  UNION ALL SELECT name, 4, true, sessionpipe_strip_date(n) FROM bedrock WHERE sessionpipe_strip_date(n) <> n
  UNION ALL SELECT name, 5, true, rev FROM bedrock WHERE i IS NOT NULL AND rev <> n
  UNION ALL SELECT name, 6, true, substr(n, i + 1) FROM bedrock WHERE i > 0
  UNION ALL SELECT name, 7, true, substr(rev, i + 1) FROM bedrock WHERE i > 0
  UNION ALL SELECT name, 8, true, sessionpipe_strip_version(substr(rev, i + 11)) FROM bedrock WHERE i IS NOT NULL
  UNION ALL SELECT name, 9, true, sessionpipe_strip_date(sessionpipe_strip_version(substr(rev, i + 11)))
    FROM bedrock WHERE i IS NOT NULL
),
-- Every step on the LiteLLM layer (0) before the models.dev layer (1).
model_prices AS (
  SELECT c.name, arg_min(coalesce(x.model, m.model), coalesce(x.layer, m.layer) * 100 + c.step) AS price_model
  FROM candidates c
  LEFT JOIN (SELECT model, layer FROM prices WHERE valid_from IS NULL AND valid_until IS NULL) x
    ON NOT c.norm AND x.model = c.k
  LEFT JOIN sessionpipe_norm_prices m ON c.norm AND m.k = c.k
  WHERE coalesce(x.model, m.model) IS NOT NULL
  GROUP BY c.name
),
-- The counted calls with their price: the period of the model's row that holds the call's
-- time, else its base price (price.Table.LookupAt).
rated AS (
  SELECT w.*, mp.price_model, s.cwd AS session_cwd, p.* EXCLUDE (model),
    greatest(usage.input, 0)::DOUBLE AS n_in, greatest(usage.output, 0)::DOUBLE AS n_out,
    greatest(usage.cache_read, 0)::DOUBLE AS n_cr,
    CASE
      WHEN greatest(usage.cache_write_5m, 0) + greatest(usage.cache_write_1h, 0) = 0 THEN greatest(usage.cache_write, 0)
      ELSE greatest(usage.cache_write_5m, 0)
        + greatest(greatest(usage.cache_write, 0) - greatest(usage.cache_write_5m, 0) - greatest(usage.cache_write_1h, 0), 0)
    END::DOUBLE AS n_w5,
    greatest(usage.cache_write_1h, 0)::DOUBLE AS n_w1,
    CASE WHEN usage.speed IS NOT DISTINCT FROM 'fast' THEN p.fast ELSE 1e0 END AS mult
  FROM winners w
  LEFT JOIN model_prices mp ON mp.name = w.model
  LEFT JOIN prices p ON p.model = mp.price_model
    AND (p.valid_from IS NULL AND p.valid_until IS NULL
         OR w.ts IS NOT NULL AND (p.valid_from IS NULL OR epoch_us(w.ts) >= epoch_us(p.valid_from))
                             AND (p.valid_until IS NULL OR epoch_us(w.ts) < epoch_us(p.valid_until)))
  LEFT JOIN info s USING (format, host, session_id)
  WHERE w.fact = 'u'
  QUALIFY row_number() OVER (PARTITION BY w.k1, w.kh ORDER BY p.valid_from IS NULL AND p.valid_until IS NULL) = 1
),
-- Where each call's price comes from (price.Table.PriceEntry): an override's row, a recorded
-- cost above 0, a local runtime, the table's row; none: unpriced.
sourced AS (
  SELECT *,
    CASE
      WHEN model IS NOT DISTINCT FROM '<synthetic>' THEN NULL
      WHEN source = 'override' THEN 'override'
      WHEN cost_usd > 0 AND NOT isinf(cost_usd) AND NOT isnan(cost_usd) THEN 'recorded'
      WHEN sessionpipe_local(provider, model) THEN 'local'
      ELSE source
    END AS price_source
  FROM rated
),
-- The cost of each call: a recorded cost as is, a local call 0, else the price's
-- (price.Price.cost: the same float64 operations in the same order), in nano-dollars
-- (index.nanoUSD).
dollars AS (
  SELECT *,
    CASE
      WHEN price_source IS NULL THEN NULL
      WHEN price_source = 'recorded' THEN cost_usd
      WHEN price_source = 'local' THEN 0e0
      WHEN long_threshold = 0 OR (long_whole_request AND n_in + n_cr + n_w5 + n_w1 <= long_threshold) THEN
        (n_in * input + n_out * output + n_w5 * cache_write_5m + n_w1 * cache_write_1h + n_cr * cache_read) * mult
      WHEN long_whole_request THEN
        (n_in * long_input + n_out * long_output + n_w5 * long_cache_write_5m + n_w1 * long_cache_write_1h
          + n_cr * long_cache_read) * mult
      ELSE
        (CASE WHEN n_in > long_threshold AND long_input <> input
              THEN long_threshold * input + (n_in - long_threshold) * long_input ELSE n_in * input END
       + CASE WHEN n_out > long_threshold AND long_output <> output
              THEN long_threshold * output + (n_out - long_threshold) * long_output ELSE n_out * output END
       + CASE WHEN n_w5 > long_threshold AND long_cache_write_5m <> cache_write_5m
              THEN long_threshold * cache_write_5m + (n_w5 - long_threshold) * long_cache_write_5m ELSE n_w5 * cache_write_5m END
       + CASE WHEN n_w1 > long_threshold AND long_cache_write_1h <> cache_write_1h
              THEN long_threshold * cache_write_1h + (n_w1 - long_threshold) * long_cache_write_1h ELSE n_w1 * cache_write_1h END
       + CASE WHEN n_cr > long_threshold AND long_cache_read <> cache_read
              THEN long_threshold * cache_read + (n_cr - long_threshold) * long_cache_read ELSE n_cr * cache_read END) * mult
    END AS usd
  FROM sourced
),
calls AS MATERIALIZED (
  SELECT *,
    CASE
      WHEN usd IS NULL THEN NULL
      WHEN isnan(usd) OR usd <= 0 THEN 0
      WHEN usd >= sessionpipe_max_usd() THEN 9223372036854775807
      ELSE round(usd * 1e9)::BIGINT
    END AS cost_nano_usd,
    price_source = 'recorded' AS cost_recorded
  FROM dollars
)`
