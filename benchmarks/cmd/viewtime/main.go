// Command viewtime times queries of the DuckDB views (duckdb.DuckDBScript)
// over an exported Parquet directory, in one DuckDB of this process:
//
//	go -C benchmarks run ./cmd/viewtime -n 3 DIR "SELECT count(*) FROM sessions"
//
// With no query it times the one BenchmarkRun checks the Parquet with.
// -script FILE runs that script instead of the generated one (to try a
// change of the views without building). It prints, for each query and
// round, the rows and the time, and the time the views took to create.
package main

import (
	"database/sql"
	"flag"
	"fmt"
	"os"
	"time"

	_ "github.com/marcboeker/go-duckdb/v2"

	"github.com/sessionpipe/sessionpipe/pipeline/export/duckdb"
)

func main() {
	rounds := flag.Int("n", 1, "rounds of each query")
	script := flag.String("script", "", "run this SQL file instead of the generated views")
	print := flag.Bool("print", false, "print the generated views and stop")
	flag.Parse()
	if flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: viewtime [-n N] [-script FILE] [-print] DIR [QUERY...]")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Args()[1:], *rounds, *script, *print); err != nil {
		fmt.Fprintln(os.Stderr, "viewtime:", err)
		os.Exit(1)
	}
}

func run(dir string, queries []string, rounds int, scriptFile string, print bool) error {
	script := duckdb.DuckDBScript(duckdb.ViewConfig{Dir: dir})
	if print {
		fmt.Print(script)
		return nil
	}
	if scriptFile != "" {
		b, err := os.ReadFile(scriptFile)
		if err != nil {
			return err
		}
		script = string(b)
	}
	if len(queries) == 0 {
		queries = []string{"SELECT format, session_id, turns, api_calls, total_tokens, cost_nano_usd FROM sessions"}
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	t0 := time.Now()
	if _, err := db.Exec(script); err != nil {
		return fmt.Errorf("views: %w", err)
	}
	fmt.Printf("views\t%.3fs\n", time.Since(t0).Seconds())
	for range rounds {
		for _, q := range queries {
			t := time.Now()
			n, err := count(db, q)
			if err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
			fmt.Printf("%.3fs\t%d rows\t%s\n", time.Since(t).Seconds(), n, q)
		}
	}
	return nil
}

// count runs q and reads its rows.
func count(db *sql.DB, q string) (int, error) {
	rows, err := db.Query(q)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	return n, rows.Err()
}
