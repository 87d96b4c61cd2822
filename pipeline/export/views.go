package export

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/price"
)

// DuckDBInit returns a DuckDB SQL script that defines the views entries,
// api_calls and sessions over the Parquet files under dir, priced with the
// embedded price table ([price.Default]). It is [DuckDBScript] with
// nothing but the directory set.
func DuckDBInit(dir string) string {
	return DuckDBScript(ViewConfig{Dir: dir})
}

// ViewConfig configures [DuckDBScript].
type ViewConfig struct {
	// Dir is the output root of a [Writer]: the views read every
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
//     earlier timestamp, session created first, then position), copies
//     counting nothing; with its tokens and cost.
//   - sessions: one row per session holding a conversation, with the
//     counters of index.Session (turns, messages, API calls, tool calls
//     and errors, the four token counters and their total, cost, models,
//     compactions, subagents) and its host, cwd, first and last ts,
//     parent session, title and slug.
//   - prices (a table): the price table, one row per model key, with the
//     rates its row resolves to, as the script embeds it.
//
// Helper macros and tables are named sessionpipe_*. Everything is created
// with CREATE OR REPLACE TEMP, so that running the script again replaces
// it and a database file opened with it is left unchanged. The views read
// the files at each query; while no file matches, DuckDB refuses to
// create entries and the views built on it.
//
// Costs are those of the Go code to the nano-dollar: a recorded cost_usd
// is used as is, every other call is priced by the embedded table with
// the same float64 operations in the same order, rounded to nano-dollars
// per call, and summed as integers. docs/duckdb.md lists the few places
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
	if cfg.Manifest {
		writeManifestEntries(&b, cfg.Dir)
	} else {
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

// writePrices writes the prices view: every model key t prices, with the
// rates its row resolves to (defaults filled, tiers built).
func writePrices(b *strings.Builder, t *price.Table) {
	b.WriteString(`-- The price table, one row per model key (pipeline/price, resolved rates in USD per token).
CREATE OR REPLACE TEMP TABLE prices AS
SELECT * FROM (VALUES
`)
	models := t.Models()
	for i, m := range models {
		p, _ := t.Lookup(m) // a key of the table: its own row
		l := &p.Long
		fmt.Fprintf(b, "  (%s, %s, %s, %s, %s, %s, %s, %d, %t, %s, %s, %s, %s, %s)",
			sqlString(m), sqlFloat(p.Input), sqlFloat(p.Output), sqlFloat(p.CacheRead),
			sqlFloat(p.CacheWrite5m), sqlFloat(p.CacheWrite1h), sqlFloat(p.Fast),
			l.Threshold, l.WholeRequest, sqlFloat(l.Input), sqlFloat(l.Output), sqlFloat(l.CacheRead),
			sqlFloat(l.CacheWrite5m), sqlFloat(l.CacheWrite1h))
		if i < len(models)-1 {
			b.WriteString(",\n")
		}
	}
	if len(models) == 0 {
		// An empty table prices nothing; VALUES needs a row.
		b.WriteString("  (NULL::VARCHAR, 0e0, 0e0, 0e0, 0e0, 0e0, 1e0, 0::BIGINT, false, 0e0, 0e0, 0e0, 0e0, 0e0)")
	}
	b.WriteString(`
) AS t(model, input, output, cache_read, cache_write_5m, cache_write_1h, fast,
       long_threshold, long_whole_request, long_input, long_output, long_cache_read,
       long_cache_write_5m, long_cache_write_1h)
WHERE model IS NOT NULL;

`)
	b.WriteString(`-- The keys by normalised spelling (price.Table.Lookup, step 3); a spelling two keys share names neither.
CREATE OR REPLACE TEMP TABLE sessionpipe_norm_prices AS
SELECT sessionpipe_norm(model) AS k, any_value(model) AS model
FROM prices
WHERE sessionpipe_norm(model) IS NOT NULL
GROUP BY ALL
HAVING count(*) = 1;

`)
	fmt.Fprintf(b, "-- nanoUSD's cap (math.MaxInt64/1e9 as a float64).\nCREATE OR REPLACE TEMP MACRO sessionpipe_max_usd() AS %s;\n\n", sqlFloat(math.MaxInt64/1e9))
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
	b.WriteString(`-- Every entry once per file it was read from: rows with the same key and file are the same
-- entry sent twice (a batch of lines read again after a crash, a lost checkpoint or past the
-- stream's duplicate window); the lowest seq is kept. Copies of a record in other files (a
-- resumed session, an archive) are rows of their own: the counting rules read them.
CREATE OR REPLACE TEMP VIEW entry_copies AS
`)
	if !loose {
		fmt.Fprintf(b, "SELECT *\nFROM read_parquet(%s, hive_partitioning = true, union_by_name = true)\n", sqlString(glob))
	} else {
		// The glob matches any character where dir has a backslash:
		// keep the files below dir itself.
		fmt.Fprintf(b, "SELECT * EXCLUDE (filename)\nFROM read_parquet(%s, hive_partitioning = true, union_by_name = true, filename = true)\nWHERE starts_with(filename, %s)\n",
			sqlString(glob), sqlString(strings.TrimRight(dir, "/")+"/"))
	}
	writeEntriesQualify(b)
}

// writeEntriesQualify ends the entry_copies view and writes entries.
func writeEntriesQualify(b *strings.Builder) {
	b.WriteString("QUALIFY row_number() OVER (PARTITION BY key, host, path ORDER BY seq, line, object) = 1;\n\n")
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
  cost_nano_usd, cost_nano_usd / 1e9 AS cost_usd, cost_nano_usd IS NULL AS unpriced, cost_recorded,
  coalesce(cwd, session_cwd) AS cwd, sidechain, agent_id, labels, path, line, key, seq
FROM calls;

-- One row per session holding a conversation (a message, a compaction or usage), with the
-- aggregates of index.Session.
CREATE OR REPLACE TEMP VIEW sessions AS
` + aggregation + `, counted AS (
  SELECT format, session_id,
    count_if(real_input) FILTER (WHERE fact = 'e') AS user_messages,
    count_if(turn) FILTER (WHERE fact = 'e') AS turns,
    sum(len(tool_calls)) FILTER (WHERE fact = 'e') AS tool_calls,
    sum(len(list_filter(tool_results, r -> r.is_error))) FILTER (WHERE fact = 'e') AS tool_errors,
    count_if(kind = 'compaction') FILTER (WHERE fact = 'e') AS compactions,
    count(*) FILTER (WHERE fact = 'r') AS assistant_messages
  FROM winners
  GROUP BY format, session_id
), spent AS (
  SELECT format, session_id,
    count(*) AS api_calls,
    sum(usage.input) AS input_tokens, sum(usage.output) AS output_tokens,
    sum(usage.cache_read) AS cache_read_tokens, sum(usage.cache_write) AS cache_write_tokens,
    sum(coalesce(cost_nano_usd, 0)) AS cost_nano_usd,
    count_if(cost_nano_usd IS NULL) AS unpriced_calls,
    list_sort(list(DISTINCT model) FILTER (WHERE model IS NOT NULL)) AS models,
    list_sort(list(DISTINCT model) FILTER (WHERE model IS NOT NULL AND cost_nano_usd IS NULL)) AS unpriced_models
  FROM calls
  GROUP BY format, session_id
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
  coalesce(c.models, []) AS models,
  coalesce(f.compactions, 0)::BIGINT AS compactions,
  s.subagents,
  s.parent_session_id, s.title, s.slug
FROM info s
LEFT JOIN counted f USING (format, session_id)
LEFT JOIN spent c USING (format, session_id)
WHERE s.conversation
ORDER BY s.first_ts NULLS FIRST, s.session_id, s.format;
`

// aggregation is the chain of common table expressions both derived
// views start with, following pipeline/index: aggregate.go (Add),
// fact.go (the winner of a fact) and session.go (what every entry tells
// about its session). Its last expression, calls, is api_calls' rows
// with every column of their entries.
const aggregation = `WITH
-- The entries of sessions (session_id set), with what the aggregator derives from each.
e0 AS (
  SELECT *,
    coalesce(epoch_us(ts), 9223372036854775807) AS ts_key, -- unknown after every known time
    coalesce(epoch_us(ts), 0) AS ts_id,
    coalesce(agent_id, '') AS agent,
    coalesce(path, '') AS file,
    kind = 'message' AND role IS NOT DISTINCT FROM 'user' AND NOT meta AND NOT sidechain AS real_input,
    kind = 'message' AND role IS NOT DISTINCT FROM 'assistant' AND NOT meta AND NOT sidechain AS assistant
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
  SELECT format, session_id,
    min(ts) AS first_ts,
    max(ts) AS last_ts,
    min(ts) FILTER (WHERE kind = 'session') AS header_ts,
    first(host ORDER BY ts_key, agent, line, object, file) AS host,
    first(cwd ORDER BY CASE WHEN kind = 'session' THEN 0 WHEN sidechain THEN 2 ELSE 1 END, ts_key, agent, line, object, file)
      FILTER (WHERE cwd IS NOT NULL) AS cwd,
    first(parent_session_id ORDER BY ts_key DESC, agent DESC, line DESC, object DESC, file DESC)
      FILTER (WHERE parent_session_id IS NOT NULL AND parent_session_id <> session_id AND NOT sidechain) AS parent_session_id,
    first(title ORDER BY ts_key DESC, agent DESC, line DESC, object DESC, file DESC) FILTER (WHERE title IS NOT NULL) AS title,
    first(slug ORDER BY ts_key DESC, agent DESC, line DESC, object DESC, file DESC)
      FILTER (WHERE slug IS NOT NULL AND NOT sidechain) AS slug,
    count(DISTINCT agent_id) FILTER (WHERE NOT copy) AS subagents,
    bool_or(kind IN ('message', 'compaction') OR usage_key IS NOT NULL) AS conversation
  FROM e
  GROUP BY format, session_id
),
-- Every occurrence of a countable fact (index.Aggregator.Add): an entry that counts something
-- (fact 'e': format, entry_id, ts), an assistant message (fact 'r': the Claude Code message
-- id, else the entry), an API call (fact 'u': usage_key, non-zero total). Copies count nothing.
occurrences AS (
  SELECT 'e' AS fact, format AS k1, '' AS k2, entry_id AS k3, ts_id AS k4, 0::BIGINT AS total, * EXCLUDE (total)
  FROM e
  WHERE NOT copy AND (real_input OR len(tool_calls) > 0 OR len(list_filter(tool_results, r -> r.is_error)) > 0 OR kind = 'compaction')
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
-- total; then a main-transcript occurrence before a sidechain replay; then the earlier
-- timestamp (unknown last); then the session created first (index.createdBefore); then the
-- position. First the best occurrence in each session, then those that tie for first place
-- before the session order decides.
top AS MATERIALIZED (
  SELECT o.*,
    coalesce(epoch_us(coalesce(s.header_ts, s.first_ts)), -9223372036854775808) AS s_created,
    coalesce(epoch_us(s.last_ts), -9223372036854775808) AS s_last,
    coalesce(s.parent_session_id, '') AS s_parent
  FROM (
    SELECT * FROM occurrences
    QUALIFY row_number() OVER (PARTITION BY fact, k1, k2, k3, k4, format, session_id
                               ORDER BY total DESC, sidechain, ts_key, agent, line, object, file) = 1
  ) o
  JOIN info s USING (format, session_id)
  QUALIFY rank() OVER (PARTITION BY fact, k1, k2, k3, k4 ORDER BY total DESC, sidechain, ts_key) = 1
),
-- How many other sessions' occurrences beat each one: createdBefore is applied pairwise, as
-- its parent rule is no sort key.
losses AS (
  SELECT x.fact, x.k1, x.k2, x.k3, x.k4, x.format, x.session_id,
    count_if(CASE
      WHEN y.s_created <> x.s_created THEN y.s_created < x.s_created
      WHEN x.s_parent = y.session_id THEN true
      WHEN y.s_parent = x.session_id THEN false
      WHEN y.s_last <> x.s_last THEN y.s_last < x.s_last
      WHEN y.session_id <> x.session_id THEN y.session_id < x.session_id
      ELSE y.format < x.format
    END) AS n
  FROM top x JOIN top y
    ON x.fact = y.fact AND x.k1 = y.k1 AND x.k2 = y.k2 AND x.k3 = y.k3 AND x.k4 = y.k4
   AND NOT (x.format = y.format AND x.session_id = y.session_id)
  GROUP BY ALL
),
winners AS MATERIALIZED (
  SELECT t.* EXCLUDE (s_created, s_last, s_parent)
  FROM top t
  LEFT JOIN losses l USING (fact, k1, k2, k3, k4, format, session_id)
  QUALIFY row_number() OVER (PARTITION BY fact, k1, k2, k3, k4
                             ORDER BY coalesce(l.n, 0), s_created, s_last, session_id, format) = 1
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
model_prices AS (
  SELECT c.name, arg_min(coalesce(x.model, m.model), c.step) AS price_model
  FROM candidates c
  LEFT JOIN prices x ON NOT c.norm AND x.model = c.k
  LEFT JOIN sessionpipe_norm_prices m ON c.norm AND m.k = c.k
  WHERE coalesce(x.model, m.model) IS NOT NULL
  GROUP BY c.name
),
-- The counted calls with their cost: a recorded cost_usd as is, else the price table's
-- (price.Price.cost: the same float64 operations in the same order), in nano-dollars
-- (index.nanoUSD).
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
  LEFT JOIN info s USING (format, session_id)
  WHERE w.fact = 'u'
),
dollars AS (
  SELECT *,
    CASE
      WHEN cost_usd IS NOT NULL THEN cost_usd
      WHEN price_model IS NULL THEN NULL
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
  FROM rated
),
calls AS MATERIALIZED (
  SELECT *,
    CASE
      WHEN usd IS NULL THEN NULL
      WHEN isnan(usd) OR usd <= 0 THEN 0
      WHEN usd >= sessionpipe_max_usd() THEN 9223372036854775807
      ELSE round(usd * 1e9)::BIGINT
    END AS cost_nano_usd,
    cost_usd IS NOT NULL AS cost_recorded
  FROM dollars
)`
