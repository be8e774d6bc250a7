package report

import (
	"bytes"
	"strconv"
	"testing"
	"time"
)

// BenchmarkTableRows lays out the job list's table a block at a time, as
// JobStream's workers do, without reading a store: ns/op is the cost of
// one row, through tablewriter and through appendRows. The rows are made
// before, each with an id of its own.
func BenchmarkTableRows(b *testing.B) {
	p := Printer{Now: func() time.Time { return now }}
	j := sampleJobs()[0]
	rows := make([][]string, streamBlock)
	for i := range rows {
		j.ID = "20261130-094722.0" + strconv.Itoa(10000+i) + "-366a665c"
		rows[i] = []string{j.ID, p.state(string(j.State)), p.reason(j), Attempts(j), j.Queue,
			strconv.Itoa(j.Priority), orNone(j.Label), p.age(j.UpdatedAt), p.runningFor(j), command(j.Command)}
	}
	b.Run("tablewriter", func(b *testing.B) { // the layout before; now of cells that are not plain
		var buf bytes.Buffer
		b.ReportAllocs()
		for done := 0; done < b.N; done += len(rows) {
			buf.Reset()
			if err := writeRows(&buf, jobHeader, rows[:min(len(rows), b.N-done)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("appendRows", func(b *testing.B) { // tableBlock's
		var out []byte
		var err error
		b.ReportAllocs()
		for done := 0; done < b.N; done += len(rows) {
			if out, err = appendRows(out[:0], jobHeader, rows[:min(len(rows), b.N-done)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
