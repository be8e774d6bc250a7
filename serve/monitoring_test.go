package serve_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/serve"
)

// The monitoring kit shipped beside /metrics (monitoring/: a Grafana
// dashboard and Prometheus alerting rules, in the tarball and the .deb)
// uses only series /metrics serves.
func TestMonitoringUsesServedMetrics(t *testing.T) {
	h := newHome(t)
	ts := h.serve(t, serve.Options{})
	finished(t, h)
	served := map[string]bool{}
	for name, fam := range scrape(t, ts.URL) {
		served[name] = true
		if fam.GetType().String() == "HISTOGRAM" {
			served[name+"_bucket"], served[name+"_sum"], served[name+"_count"] = true, true, true
		}
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	data, err := os.ReadFile("monitoring/queuectl-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("queuectl-dashboard.json: %v", err)
	}
	var exprs []string
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("dashboard panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	rules, err := os.ReadFile("monitoring/queuectl-alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	exprs = append(exprs, string(rules))
	metric := regexp.MustCompile(`\bqueuectl_[a-z_]+`)
	for _, e := range exprs {
		for _, name := range metric.FindAllString(e, -1) {
			if !served[name] {
				t.Errorf("the monitoring kit uses %s, which /metrics does not serve", name)
			}
		}
	}
}

// promtool accepts the alerting rules, and its unit tests of them
// (queuectl-alerts_test.yml: each alert fires on what it is for, and not
// before its time) pass.
func TestAlertRules(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool not found; CI installs it (Debian's prometheus package)")
		}
		t.Skip("promtool not found (Debian: apt-get install prometheus)")
	}
	for _, args := range [][]string{
		{"check", "rules", "queuectl-alerts.yml"},
		{"test", "rules", "queuectl-alerts_test.yml"},
	} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = "monitoring"
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "SUCCESS") {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	files, _ := filepath.Glob("monitoring/*")
	if !slices.Contains(files, "monitoring/queuectl-dashboard.json") {
		t.Errorf("monitoring/ = %v, want the dashboard beside the rules", files)
	}
}
