// Package reliability holds the room server's reliability, security and load tests: crash
// tests that SIGKILL the real binary mid-flood and check that no acknowledged message was lost
// or duplicated (SQLite, and PostgreSQL with two servers on one database), a table of hostile
// requests that must each be refused precisely without storing anything, and floods against
// the rate caps, dedup and the acknowledgement cap.
//
// It has no non-test code; the tests drive the server only over HTTP on 127.0.0.1.
package reliability
