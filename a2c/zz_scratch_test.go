package a2c

import (
	"context"
	"fmt"
	"testing"
)

func tbTrainMetric(t *testing.T, opt Options, topt TrainOptions) *Result {
	c := mustCounter(t)
	train, _ := HoldOut(Inputs(loadCorpus(t, "toolbench", "toolbench")), 3)
	RawCounts(train, c)
	res, err := MeasureFolds(context.Background(), train, opt, c, "cl100k_base", nil, 3, topt, nil)
	if err != nil || !res.Lossless {
		t.Fatal(err)
	}
	return res
}

func TestZZDict(t *testing.T) {
	c := mustCounter(t)
	for _, topt := range []TrainOptions{{MinShare: 0.25}, {MinShare: 0.35}, {MinShare: 0.4}, {MinShare: 0.5}, {MinShare: 0.6}, {MinShare: 0.75}, {MinShare: 0.4, MaxBytes: 4096}, {MinShare: 0.4, MinLen: 48}, {MinShare: 0.4, MinLen: 12}} {
		r := tbTrainMetric(t, Default(c), topt)
		fmt.Printf("%+v raw %d pay %d ins %d dict %d full %d saving %.1f%%\n", topt, r.RawTokens, r.PayloadTokens, r.InstructionTokens, r.DictionaryTokens, r.FullCostTokens, 100*r.Saving)
	}
}
