package serve

import (
	"bytes"
	"math"
	"slices"
	"strconv"
)

// promText is a page of Prometheus's text exposition format, version
// 0.0.4, the format every Prometheus-compatible scraper reads. It is
// written here, in a few lines, rather than by client_golang, whose
// package initialisation (registries, descriptors, process and Go
// collectors, protobuf) every queuectl command paid at start-up, enqueue
// included, for the one command that serves it (DECISIONS.md).
type promText struct{ bytes.Buffer }

const promTextType = "text/plain; version=0.0.4; charset=utf-8"

// family starts a metric family: its help and type (gauge, counter,
// histogram) precede its samples.
func (p *promText) family(name, typ, help string) {
	p.WriteString("# HELP " + name + " ")
	p.WriteString(escapeProm(help, false))
	p.WriteString("\n# TYPE " + name + " " + typ + "\n")
}

// sample writes one line, name{label="value",…} v; labels are name, value
// pairs.
func (p *promText) sample(name string, v float64, labels ...string) {
	p.WriteString(name)
	for i := 0; i+1 < len(labels); i += 2 {
		if i == 0 {
			p.WriteByte('{')
		} else {
			p.WriteByte(',')
		}
		p.WriteString(labels[i] + `="` + escapeProm(labels[i+1], true) + `"`)
	}
	if len(labels) > 1 {
		p.WriteByte('}')
	}
	p.WriteByte(' ')
	p.WriteString(promFloat(v))
	p.WriteByte('\n')
}

// histogram writes h's cumulative buckets (le="+Inf" last), sum and count.
func (p *promText) histogram(name string, h *histogram, labels ...string) {
	var cum uint64
	for i, n := range h.counts {
		cum += n
		le := math.Inf(1)
		if i < len(h.bounds) {
			le = h.bounds[i]
		}
		p.sample(name+"_bucket", float64(cum), slices.Concat(labels, []string{"le", promFloat(le)})...)
	}
	p.sample(name+"_sum", h.sum, labels...)
	p.sample(name+"_count", float64(cum), labels...)
}

// promFloat spells v as the format does: +Inf, -Inf, NaN, else the
// shortest decimal that reads back as v.
func promFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// escapeProm escapes a backslash and a line feed, and in a label value a
// double quote too, as the format requires.
func escapeProm(s string, label bool) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		var esc string
		switch c := s[i]; {
		case c == '\\':
			esc = `\\`
		case c == '\n':
			esc = `\n`
		case c == '"' && label:
			esc = `\"`
		default:
			if b != nil {
				b = append(b, c)
			}
			continue
		}
		if b == nil {
			b = append(make([]byte, 0, len(s)+8), s[:i]...)
		}
		b = append(b, esc...)
	}
	if b == nil {
		return s
	}
	return string(b)
}

// histogram counts observations in buckets of fixed upper bounds, as a
// Prometheus histogram does: an observation equal to a bound is in that
// bound's bucket.
type histogram struct {
	bounds []float64 // ascending upper bounds
	counts []uint64  // per bucket, not cumulative; the last one is +Inf's
	sum    float64
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	i, _ := slices.BinarySearch(h.bounds, v)
	h.counts[i]++
	h.sum += v
}
