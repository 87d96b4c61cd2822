// Package duckdb writes the DuckDB script of the SQL views over the
// Parquet files of package export ([DuckDBScript]): the entries (one row
// per entry key, the lowest seq kept), the API calls priced with an
// embedded price table, the sessions and their aggregates, the same numbers
// as the indexer's. The views read every *.parquet file below a directory,
// or only the files the manifest lists (in a directory or an S3 bucket,
// with a secret scoped to it), or are empty views of the files' columns when
// nothing was written yet.
//
// It imports package export for the files' schema and manifest name (so it
// links parquet-go) and pipeline/price; it does not link DuckDB: the script
// is text for the duckdb CLI or a database/sql driver.
package duckdb
