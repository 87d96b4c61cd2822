package duckdb

import (
	"fmt"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
)

// DuckDBS3 is how DuckDB reaches a bucket: its httpfs settings, as a
// secret scoped to the output's prefix. The credentials are DuckDB's
// credential chain (the aws extension: environment, shared config and
// profile, web identity, instance role), the chain the exporter uses, so
// the script holds no key.
type DuckDBS3 struct {
	Endpoint  string // host[:port] of a server other than AWS, with UseSSL
	UseSSL    bool
	PathStyle bool
	Region    string
	Profile   string
}

// writeS3Secret writes the extensions and the secret of s (nothing when
// nil).
func writeS3Secret(b *strings.Builder, s *DuckDBS3, scope string) {
	if s == nil {
		return
	}
	b.WriteString("-- The bucket: httpfs, and a secret from the AWS credential chain (no key in this script).\n")
	b.WriteString("INSTALL httpfs;\nLOAD httpfs;\nINSTALL aws;\nLOAD aws;\n")
	b.WriteString("CREATE OR REPLACE TEMP SECRET sessionpipe_s3 (\n  TYPE s3,\n  PROVIDER credential_chain")
	if s.Profile != "" {
		fmt.Fprintf(b, ",\n  PROFILE %s", sqlString(s.Profile))
	}
	if s.Region != "" {
		fmt.Fprintf(b, ",\n  REGION %s", sqlString(s.Region))
	}
	if s.Endpoint != "" {
		fmt.Fprintf(b, ",\n  ENDPOINT %s,\n  USE_SSL %t", sqlString(s.Endpoint), s.UseSSL)
	}
	if s.PathStyle {
		b.WriteString(",\n  URL_STYLE 'path'")
	}
	fmt.Fprintf(b, ",\n  SCOPE %s\n);\n\n", sqlString(strings.TrimRight(scope, "/")))
}

// writeManifestEntries writes the entries views over the files the
// manifest under dir lists, read when the script runs (a variable):
// files committed later are seen by running the script again.
func writeManifestEntries(b *strings.Builder, dir string) {
	root := strings.TrimRight(dir, "/") + "/"
	fmt.Fprintf(b, `-- The committed files: those the manifest lists, as it is now (run the script again for later ones).
SET VARIABLE sessionpipe_files = (
  SELECT coalesce(list(%s || path ORDER BY path), []::VARCHAR[])
  FROM read_json(%s, format = 'newline_delimited', columns = {path: 'VARCHAR'})
);

`, sqlString(root), sqlString(root+parquet.ManifestName))
	b.WriteString(`-- Every entry once per file it was read from: rows with the same key and file are the same
-- entry sent twice (a batch of lines read again after a crash, a lost checkpoint or past the
-- stream's duplicate window); the lowest seq is kept. Copies of a record in other files (a
-- resumed session, an archive) are rows of their own: the counting rules read them.
CREATE OR REPLACE TEMP VIEW entry_copies AS
`)
	writeSource(b, "SELECT *\nFROM read_parquet(getvariable('sessionpipe_files'), hive_partitioning = true, union_by_name = true)")
	writeEntriesQualify(b)
}
