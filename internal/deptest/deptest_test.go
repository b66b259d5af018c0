package deptest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/parleyhq/parley"

// libraries know nothing of the server.
var libraries = []string{"bpe", "convention", "aacp", "a2c", "a2c/optimize", "trace", "toon", "figure", "diag", "bench"}

// server are the server's packages: the root package (the domain types every server part
// shares), the service, the stores, the edges and the test servers. Any package that imports
// the root is the server's too, which the root entry catches.
var server = []string{"", "room", "http", "mcp", "web", "sqlite", "postgres", "storetest", "evidence",
	"internal/servertest", "internal/pgtest", "internal/mock", "internal/sse", "internal/fanout", "internal/metrics", "cmd/parley"}

// rule: from must not depend (directly or not) on any of not.
type rule struct {
	from []string
	not  []string
	why  string
}

var rules = []rule{
	{libraries, server, "a library must not link the room server"},
	{[]string{"convention", "aacp", "diag"}, []string{"bpe"}, "parsing a message must not link the tokenizer vocabularies: take a token counter"},
	{[]string{"mcp", "http"}, []string{"room"}, "an edge is handed the service's renderers (parley.Renderer) rather than importing the service"},
	{[]string{"", "room", "sqlite", "postgres", "mcp", "web"}, []string{"github.com/prometheus/client_golang/prometheus"}, "only the HTTP edge and internal/metrics link Prometheus; the service reports through room.Observer"},
}

// TestDependencies reads the module's import graph with `go list -deps` and checks every rule,
// naming the chain of imports that breaks one.
func TestDependencies(t *testing.T) {
	graph := importGraph(t)
	for _, r := range rules {
		for _, from := range r.from {
			fromPath := path(from)
			if _, ok := graph[fromPath]; !ok {
				t.Errorf("package %s is not in the module's import graph: update the rules", fromPath)
				continue
			}
			for _, not := range r.not {
				if chain := chainTo(graph, fromPath, path(not)); chain != nil {
					t.Errorf("%s depends on %s (%s): %s", fromPath, path(not), strings.Join(chain, " → "), r.why)
				}
			}
		}
	}
}

// path is a package's import path: rel inside the module, or rel itself when it names
// another module's package (its first element has a dot).
func path(rel string) string {
	if first, _, _ := strings.Cut(rel, "/"); strings.Contains(first, ".") {
		return rel
	}
	if rel == "" {
		return module
	}
	return module + "/" + rel
}

// importGraph maps every package of the module, and every package they depend on, to its
// imports (test files left out: what a package's tests import is not linked into it).
func importGraph(t *testing.T) map[string][]string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH (go test puts it there): %v", err)
	}
	cmd := exec.Command(gobin, "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		graph[f[0]] = f[1:]
	}
	return graph
}

// chainTo returns the shortest import chain from `from` to `to` (both included), or nil when
// from does not depend on to. A package is not its own dependency.
func chainTo(graph map[string][]string, from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, next := range graph[p] {
			if _, seen := prev[next]; seen {
				continue
			}
			prev[next] = p
			if next == to {
				chain := []string{to}
				for q := p; q != ""; q = prev[q] {
					chain = append(chain, q)
				}
				slices.Reverse(chain)
				return chain
			}
			queue = append(queue, next)
		}
	}
	return nil
}

// The chain search itself, on a graph small enough to check by eye.
func TestChainTo(t *testing.T) {
	g := map[string][]string{"a": {"b", "c"}, "b": {"d"}, "c": {"d", "e"}, "e": {"a"}}
	if got := chainTo(g, "a", "e"); strings.Join(got, " ") != "a c e" {
		t.Errorf("a to e: %v", got)
	}
	if got := chainTo(g, "b", "a"); got != nil {
		t.Errorf("b to a: %v, want none", got)
	}
}
