package postgres_test

import (
	"context"
	"log"

	"github.com/parleyhq/parley/postgres"
)

// Several `parley serve` processes open the same database; each Store listens for the others'
// appends. pgxpool settings ride on the DSN.
func ExampleOpen() {
	ctx := context.Background()
	s, err := postgres.Open(ctx, "postgres://parley@db.internal:5432/parley?sslmode=verify-full&pool_max_conns=20")
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	for seq := range s.Watch(ctx, "limiter") {
		log.Printf("limiter is at #%d", seq) // posted through any process
	}
}
