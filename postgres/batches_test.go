package postgres

import (
	"sync"
	"testing"
	"time"
)

// TestRoomBatchesIdle: a room's goroutine outlives its empty queue by drainIdle, takes the ops
// added meanwhile without a goroutine of their own, and then ends, leaving no queue behind; an
// op added after that runs on a new one. Ops added from many goroutines at once each run once.
func TestRoomBatchesIdle(t *testing.T) {
	var b roomBatches[int]
	var mu sync.Mutex
	ran := map[int]int{}
	var batches int
	done := make(chan int, 1000)
	run := func(room string, batch []int) {
		mu.Lock()
		batches++
		for _, op := range batch {
			ran[op]++
		}
		mu.Unlock()
		for _, op := range batch {
			done <- op
		}
	}
	queues := func() int {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.queues)
	}
	b.add("r", 1, 8, run)
	<-done
	// Idle now, not gone: the next op is taken by the same goroutine.
	if n := queues(); n != 1 {
		t.Fatalf("%d queues right after a batch, want the idle one", n)
	}
	b.add("r", 2, 8, run)
	<-done
	time.Sleep(drainIdle + 200*time.Millisecond)
	if n := queues(); n != 0 {
		t.Fatalf("%d queues %v after drainIdle without ops, want none", n, drainIdle)
	}
	var wg sync.WaitGroup
	for w := range 10 {
		wg.Go(func() {
			for i := range 50 {
				b.add([]string{"r", "s"}[i%2], 100+w*50+i, 8, run)
			}
		})
	}
	wg.Wait()
	for range 500 {
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("an op was never run")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ran) != 502 {
		t.Errorf("%d distinct ops ran, want 502", len(ran))
	}
	for op, n := range ran {
		if n != 1 {
			t.Errorf("op %d ran %d times", op, n)
		}
	}
}
