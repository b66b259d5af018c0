package sqlite

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/sqlstore"
)

// Every `ev … run <id>` line of a post is checked with Run, a query on the read pool per
// line, and most of them ask for a run that is not there (yet). A run, once created, never
// changes. So a Sole store keeps each room's runs in memory, all of them or none: with all of
// a room's runs at hand, a missing id needs no query either. CreateRun and ImportRoom drop
// the room after they write, and bump gen; a load keeps what it read only if gen did not
// move meanwhile, so that a run created during a load is never missed (as in seatcache.go).

// runCacheRoom bounds the runs kept for one room (a room with more is always read from the
// file); runCacheRooms the rooms kept (past it, the cache starts over).
var (
	runCacheRoom  = 4096
	runCacheRooms = 256
)

type runCache struct {
	on    bool // Sole
	mu    sync.Mutex
	gen   uint64
	rooms map[string]map[string]parley.Run // every run of the room, by id
	big   map[string]bool                  // rooms with more than runCacheRoom runs
}

// What the cache knows of a run.
const (
	runUnknown = iota // the room is not held: read it
	runFound
	runMissing // the room is held, without the id
	runBig     // the room has too many runs to hold: ask the file
)

// lookup returns what the cache knows of the run, and the generation a load must see
// unchanged to keep what it read.
func (c *runCache) lookup(room, id string) (parley.Run, int, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if runs, ok := c.rooms[room]; ok {
		if run, ok := runs[id]; ok {
			return run, runFound, c.gen
		}
		return parley.Run{}, runMissing, c.gen
	}
	if c.big[room] {
		return parley.Run{}, runBig, c.gen
	}
	return parley.Run{}, runUnknown, c.gen
}

// keep stores the room's runs (nil: too many to keep) if no run was written since gen.
func (c *runCache) keep(gen uint64, room string, runs map[string]parley.Run) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if c.rooms == nil || len(c.rooms)+len(c.big) >= runCacheRooms {
		c.rooms, c.big = map[string]map[string]parley.Run{}, map[string]bool{}
	}
	if runs == nil {
		c.big[room] = true
		return
	}
	c.rooms[room] = runs
}

// drop forgets the room; called after every write of its runs, committed or not.
func (c *runCache) drop(room string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.rooms, room)
}

// queryRoomRuns reads a room's runs, one more than the cache keeps (to tell that there are
// too many).
const queryRoomRuns = `SELECT ` + sqlstore.RunColumns + ` FROM runs WHERE room = $1 LIMIT $2`

// Run returns one run. ENOTFOUND.
func (s *Store) Run(ctx context.Context, room, id string) (*parley.Run, error) {
	if !s.runs.on {
		return s.Tables.Run(ctx, room, id)
	}
	run, known, gen := s.runs.lookup(room, id)
	switch known {
	case runFound:
		return &run, nil
	case runMissing:
		return nil, runNotFound(room, id)
	case runBig:
		return s.Tables.Run(ctx, room, id)
	}
	runs := map[string]parley.Run{}
	err := s.r.Query(ctx, queryRoomRuns, []any{room, int64(runCacheRoom + 1)}, func(row sqlstore.Row) error {
		r, err := sqlstore.ScanRun(row)
		if err != nil {
			return err
		}
		runs[r.ID] = *r
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	if len(runs) > runCacheRoom {
		s.runs.keep(gen, room, nil)
		return s.Tables.Run(ctx, room, id)
	}
	s.runs.keep(gen, room, runs)
	if r, ok := runs[id]; ok {
		return &r, nil
	}
	return nil, runNotFound(room, id)
}

// runNotFound is sqlstore.Tables.Run's error (TestRunCache compares them), built without fmt:
// most posts' evidence checks end here. strconv.Quote is what %q does to a string.
func runNotFound(room, id string) error {
	return &parley.Error{Code: parley.ENOTFOUND, Message: "run " + strconv.Quote(id) + " not found in room " + strconv.Quote(room)}
}

// CreateRun stores a run record. ENOTFOUND for the room; ECONFLICT if the id exists.
func (s *Store) CreateRun(ctx context.Context, r *parley.Run) error {
	defer s.runs.drop(r.Room)
	return s.Tables.CreateRun(ctx, r)
}
