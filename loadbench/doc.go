// Package loadbench is `parley bench server`: it runs the real HTTP handler and room service
// over loopback on a store the caller opens, has seats post concurrently through package
// client, and reports posts per second, post latency percentiles, memory per post, history
// read cost (cold and from the page cache) and state-record cost on a small and a large room.
//
// It lives apart from package bench, the format study's measurement engine, so that the
// format benchmarks do not link the server.
package loadbench
