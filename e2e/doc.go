// Package e2e holds parley's end-to-end tests (in its _test files): they build the real
// binary, run `parley serve` on 127.0.0.1:0 against real SQLite and PostgreSQL databases,
// and use it over HTTP and through the CLI client, as a user would; behind a real nginx
// (proxy_test.go); and through other MCP clients, the official TypeScript SDK and the MCP
// Inspector CLI, from the node project in mcpclients/ (mcpclients_test.go). There is no
// non-test Go code here.
package e2e
