// Command mutation reads the JSON reports gremlins wrote (one per package,
// `gremlins unleash --output`), prints one table of every package's test
// efficacy and mutator coverage with the mutants that survived, and exits 1
// when a package is below either threshold. `make mutation` runs it.
//
//	go run ./tools/mutation [-efficacy 90] [-coverage 85] DIR/PKG.json...
//
// A report's name, less ".json", names its package in the table.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
)

func main() {
	fs := flag.NewFlagSet("mutation", flag.ContinueOnError)
	efficacy := fs.Float64("efficacy", 90, "lowest test efficacy (killed of killed and lived, %) a package may have")
	coverage := fs.Float64("coverage", 85, "lowest mutator coverage (mutants reached by a test, %) a package may have")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: mutation [-efficacy PCT] [-coverage PCT] REPORT.json...")
		os.Exit(2)
	}
	var results []result
	for _, path := range fs.Args() {
		r, err := read(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mutation:", err)
			os.Exit(1)
		}
		results = append(results, r)
	}
	if failed := summarise(os.Stdout, results, *efficacy, *coverage); len(failed) > 0 {
		fmt.Fprintf(os.Stderr, "mutation: below %.0f %% efficacy or %.0f %% mutator coverage: %s\n",
			*efficacy, *coverage, strings.Join(failed, ", "))
		os.Exit(1)
	}
}

// report is the part of gremlins' output file this command reads.
type report struct {
	Files []struct {
		Name      string `json:"file_name"`
		Mutations []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
}

// result is one package's counts, by the statuses gremlins gives a mutant.
type result struct {
	pkg                                            string
	killed, lived, timedOut, notCovered, notViable int
	survivors                                      []string // file:line:column type
}

// efficacy is the share of the mutants a test ran against that a test
// killed; gremlins leaves timed-out mutants out of it.
func (r result) efficacy() float64 {
	if r.killed+r.lived == 0 {
		return 0
	}
	return 100 * float64(r.killed) / float64(r.killed+r.lived)
}

// coverage is the share of the mutants some test of the package reaches.
func (r result) coverage() float64 {
	if r.killed+r.lived+r.notCovered == 0 {
		return 0
	}
	return 100 * float64(r.killed+r.lived) / float64(r.killed+r.lived+r.notCovered)
}

func read(path string) (result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return result{}, fmt.Errorf("reading the report: %w", err)
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		return result{}, fmt.Errorf("%s: not a gremlins report: %w", path, err)
	}
	return count(strings.TrimSuffix(filepath.Base(path), ".json"), rep)
}

func count(pkg string, rep report) (result, error) {
	r := result{pkg: pkg}
	for _, f := range rep.Files {
		for _, m := range f.Mutations {
			switch m.Status {
			case "KILLED":
				r.killed++
			case "LIVED":
				r.lived++
				r.survivors = append(r.survivors, fmt.Sprintf("%s:%d:%d %s", f.Name, m.Line, m.Column, m.Type))
			case "TIMED OUT":
				r.timedOut++
			case "NOT COVERED":
				r.notCovered++
			case "NOT VIABLE", "SKIPPED":
				r.notViable++
			default:
				return result{}, fmt.Errorf("%s: mutant status %q unknown", pkg, m.Status)
			}
		}
	}
	sort.Strings(r.survivors)
	return r, nil
}

// summarise writes the table and the survivors, and returns the packages
// below a threshold.
func summarise(w io.Writer, results []result, minEfficacy, minCoverage float64) []string {
	var failed []string
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "package\tefficacy\tcoverage\tkilled\tlived\ttimed out\tnot covered\tnot viable\t")
	for _, r := range results {
		mark := ""
		if r.efficacy() < minEfficacy || r.coverage() < minCoverage {
			mark = " below"
			failed = append(failed, r.pkg)
		}
		fmt.Fprintf(tw, "%s\t%.2f %%\t%.2f %%\t%d\t%d\t%d\t%d\t%d\t%s\n", r.pkg, r.efficacy(), r.coverage(),
			r.killed, r.lived, r.timedOut, r.notCovered, r.notViable, mark)
	}
	_ = tw.Flush()
	for _, r := range results {
		for _, s := range r.survivors {
			fmt.Fprintf(w, "lived: %s/%s\n", r.pkg, s)
		}
	}
	return failed
}
