package duckdb

import (
	"fmt"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"

	parquetgo "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// writeEmptyEntries writes the entries view of an output without files:
// no rows, the columns read_parquet gives over files (the Parquet
// schema's, then the hive keys), so that every view after it is defined.
func writeEmptyEntries(b *strings.Builder, dir string) {
	fmt.Fprintf(b, `-- No Parquet file under %s yet: the views are empty, with the columns the files will
-- have. Run this script again once the exporter has committed a file.
CREATE OR REPLACE TEMP VIEW entry_copies AS
SELECT
`, strings.ReplaceAll(dir, "\n", " "))
	cols := emptyColumns()
	for i, c := range cols {
		sep := ","
		if i == len(cols)-1 {
			sep = ""
		}
		fmt.Fprintf(b, "  CAST(NULL AS %s) AS %s%s\n", c[1], sqlIdent(c[0]), sep)
	}
	b.WriteString("WHERE false\n")
	writeEntriesQualify(b)
}

// emptyColumns returns the name and DuckDB type of each column of the
// entries read from files: the Parquet schema's, then the hive
// partition key date (format and host are file columns too).
func emptyColumns() [][2]string {
	var cols [][2]string
	for _, f := range parquet.Schema().Fields() {
		cols = append(cols, [2]string{f.Name(), duckDBType(f)})
	}
	return append(cols, [2]string{"date", "DATE"})
}

// duckDBType returns the type DuckDB reads the Parquet node n as.
func duckDBType(n parquetgo.Node) string {
	var lt format.LogicalTypeValue
	if l := n.Type().LogicalType(); l != nil {
		lt = l.Value
	}
	if !n.Leaf() {
		switch lt.(type) {
		case *format.ListType:
			return duckDBType(n.Fields()[0].Fields()[0]) + "[]"
		case *format.MapType:
			kv := n.Fields()[0].Fields()
			return "MAP(" + duckDBType(kv[0]) + ", " + duckDBType(kv[1]) + ")"
		}
		var fs []string
		for _, f := range n.Fields() {
			fs = append(fs, sqlIdent(f.Name())+" "+duckDBType(f))
		}
		return "STRUCT(" + strings.Join(fs, ", ") + ")"
	}
	switch t := lt.(type) {
	case *format.TimestampType:
		if t.IsAdjustedToUTC {
			return "TIMESTAMP WITH TIME ZONE"
		}
		return "TIMESTAMP"
	case *format.StringType, *format.EnumType:
		return "VARCHAR"
	case *format.JsonType:
		return "JSON"
	}
	switch n.Type().Kind() {
	case parquetgo.Boolean:
		return "BOOLEAN"
	case parquetgo.Int32:
		return "INTEGER"
	case parquetgo.Int64:
		return "BIGINT"
	case parquetgo.Float:
		return "FLOAT"
	case parquetgo.Double:
		return "DOUBLE"
	}
	return "BLOB"
}

// laterColumns are the columns added to the files after the first
// release: files written before lack them, and a view that names a
// column no file has is refused.
var laterColumns = []string{"labels", "background", "tool_calls_omitted", "tool_results_omitted"}

// writeSource writes the rows of the files as query source reads them,
// with the columns added since the first release there when no file has
// them (NULL then: union_by_name already fills them for the files
// without them when one has them).
func writeSource(b *strings.Builder, source string) {
	fmt.Fprintf(b, "SELECT * FROM (\n%s\nUNION ALL BY NAME\nSELECT", source)
	types := map[string]string{}
	for _, c := range emptyColumns() {
		types[c[0]] = c[1]
	}
	for i, c := range laterColumns {
		sep := ","
		if i == len(laterColumns)-1 {
			sep = ""
		}
		fmt.Fprintf(b, " CAST(NULL AS %s) AS %s%s", types[c], sqlIdent(c), sep)
	}
	b.WriteString(" WHERE false)\n")
}

// sqlIdent quotes a column name.
func sqlIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
