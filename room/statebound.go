package room

import (
	"encoding/json"
	"sort"

	"github.com/parleyhq/parley"
)

// StateJSONCap is the most bytes a state record's JSON takes, as StateCap bounds its text.
const StateJSONCap = 32 << 10

// boundState bounds a state record the way RenderState bounds its text: every text is clipped
// to stateLineCap, and while the record's JSON is over StateJSONCap the oldest items (by the
// seq they came from, whichever list they are in) are left out first. Dropped says how many
// were; the history has them.
func boundState(rec *parley.StateRecord) {
	type item struct {
		seq  int64
		size int
		drop *bool
	}
	var items []item
	sizeOf := func(v any) int {
		b, _ := json.Marshal(v)
		return len(b) + 1 // and its comma
	}
	lists := []*[]parley.StateItem{&rec.Decisions, &rec.Done, &rec.Claims, &rec.Todos, &rec.Blocks, &rec.Costs}
	dropped := map[*parley.StateItem]*bool{}
	for _, l := range lists {
		for i := range *l {
			it := &(*l)[i]
			it.Text = clip(it.Text)
			it.Verdict = clip(it.Verdict)
			d := new(bool)
			dropped[it] = d
			items = append(items, item{it.Seq, sizeOf(it), d})
		}
	}
	asks := make([]*parley.Ask, len(rec.OpenAsks))
	askDrop := make([]*bool, len(rec.OpenAsks))
	for i, a := range rec.OpenAsks {
		c := *a // the store's ask is not ours to change
		c.Text, c.Default, c.Decider = clip(c.Text), clip(c.Default), clip(c.Decider)
		asks[i] = &c
		askDrop[i] = new(bool)
		items = append(items, item{c.Seq, sizeOf(&c), askDrop[i]})
	}
	rec.OpenAsks = asks

	total := sizeOf(rec) + len(`,"dropped":1000000000`)
	if total <= StateJSONCap {
		return
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].seq < items[j].seq })
	for _, it := range items {
		if total <= StateJSONCap {
			break
		}
		*it.drop = true
		total -= it.size
		rec.Dropped++
	}
	for _, l := range lists {
		kept := (*l)[:0:0]
		for i := range *l {
			if !*dropped[&(*l)[i]] {
				kept = append(kept, (*l)[i])
			}
		}
		*l = kept
	}
	kept := []*parley.Ask{}
	for i, a := range rec.OpenAsks {
		if !*askDrop[i] {
			kept = append(kept, a)
		}
	}
	rec.OpenAsks = kept
}
