package serve_test

import (
	"encoding/json"
	"fmt"
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

// promtool accepts every query of the Grafana dashboard, each as the
// expression of a recording rule: a query that is no valid PromQL fails
// here, as an alert rule's does below. Grafana's variables become what
// Grafana would put there: a regexp for $instance, a range for
// $__rate_interval.
func TestDashboardQueries(t *testing.T) {
	promtool := needPromtool(t)
	data, err := os.ReadFile("monitoring/queuectl-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("queuectl-dashboard.json: %v", err)
	}
	type rule struct {
		Record string `json:"record"`
		Expr   string `json:"expr"`
	}
	var rules []rule
	variable := regexp.MustCompile(`\$\{?(__[a-z_]*interval|[A-Za-z_]+)\}?`)
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			expr := variable.ReplaceAllStringFunc(tg.Expr, func(v string) string {
				if strings.HasSuffix(strings.Trim(v, "${}"), "interval") {
					return "5m"
				}
				return ".*"
			})
			rules = append(rules, rule{Record: fmt.Sprintf("dashboard:query%d", len(rules)+1), Expr: expr})
		}
	}
	if len(rules) == 0 {
		t.Fatal("queuectl-dashboard.json has no queries")
	}
	// JSON is YAML: promtool reads this as a rule file.
	file, _ := json.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	path := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SUCCESS") {
		for i, r := range rules {
			t.Logf("dashboard:query%d = %s", i+1, r.Expr)
		}
		t.Errorf("promtool check rules (the dashboard's queries): %v\n%s", err, out)
	}
}

// needPromtool finds promtool, and fails under CI=true where it must be
// installed.
func needPromtool(t *testing.T) string {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool not found; CI installs it (Debian's prometheus package)")
		}
		t.Skip("promtool not found (Debian: apt-get install prometheus)")
	}
	return promtool
}

// promtool accepts the alerting rules, and its unit tests of them
// (queuectl-alerts_test.yml: each alert fires on what it is for, and not
// before its time) pass.
func TestAlertRules(t *testing.T) {
	promtool := needPromtool(t)
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
