package bpe

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"unsafe"
)

// vocab is one encoding's mergeable tokens: their bytes in rank order and an open-addressing
// hash table from token bytes to rank.
type vocab struct {
	blob   string   // the bytes of token 0, then token 1, ...
	off    []uint32 // token r is blob[off[r]:off[r+1]]
	table  []uint64 // slot: hash tag (high 32 bits) | rank+1 (low 32 bits); 0 is empty
	mask   uint64
	maxLen int
	byte1  [256]uint32 // rank of each one-byte token (all 256 exist)
	pair   []int32     // [65536] rank of the two-byte token b0<<8|b1, or -1
}

const noRank = ^uint32(0)

// parseVocab reads the compact form written by internal/gen (see its doc) and builds the table.
func parseVocab(data string) (*vocab, error) {
	const magic = "PBPE1\n"
	if len(data) < len(magic)+4 || data[:len(magic)] != magic {
		return nil, errors.New("bpe: corrupt vocabulary (magic)")
	}
	n := int(binary.LittleEndian.Uint32([]byte(data[len(magic) : len(magic)+4])))
	lens := data[len(magic)+4:]
	if len(lens) < n {
		return nil, errors.New("bpe: corrupt vocabulary (lengths)")
	}
	blob := lens[n:]
	lens = lens[:n]
	v := &vocab{blob: blob, off: make([]uint32, n+1)}
	var o uint32
	for r := 0; r < n; r++ {
		v.off[r] = o
		l := int(lens[r])
		o += uint32(l)
		v.maxLen = max(v.maxLen, l)
	}
	v.off[n] = o
	if int(o) != len(blob) {
		return nil, errors.New("bpe: corrupt vocabulary (size)")
	}
	size := 1 << bits.Len(uint(n*2)) // load factor 1/4..1/2
	v.table = make([]uint64, size)
	v.mask = uint64(size - 1)
	v.pair = make([]int32, 1<<16)
	for i := range v.pair {
		v.pair[i] = -1
	}
	for i := range v.byte1 {
		v.byte1[i] = noRank
	}
	for r := 0; r < n; r++ {
		t := blob[v.off[r]:v.off[r+1]]
		switch len(t) {
		case 1:
			v.byte1[t[0]] = uint32(r)
		case 2:
			v.pair[int(t[0])<<8|int(t[1])] = int32(r)
		}
		h := hashString(t)
		i := h & v.mask
		for v.table[i] != 0 {
			i = (i + 1) & v.mask
		}
		v.table[i] = h&^0xFFFFFFFF | uint64(r+1)
	}
	for _, r := range v.byte1 {
		if r == noRank {
			return nil, errors.New("bpe: corrupt vocabulary (a byte has no token)")
		}
	}
	return v, nil
}

// token returns the bytes of token r.
func (v *vocab) token(r uint32) string { return v.blob[v.off[r]:v.off[r+1]] }

// rank returns the rank of the token with bytes t, or noRank.
func (v *vocab) rank(t string) uint32 {
	if len(t) > v.maxLen {
		return noRank
	}
	h := hashString(t)
	tag := h &^ 0xFFFFFFFF
	i := h & v.mask
	for {
		e := v.table[i]
		if e == 0 {
			return noRank
		}
		if e&^0xFFFFFFFF == tag {
			r := uint32(e) - 1
			if v.blob[v.off[r]:v.off[r+1]] == t {
				return r
			}
		}
		i = (i + 1) & v.mask
	}
}

const (
	hm1 = 0x9E3779B97F4A7C15
	hm2 = 0xC2B2AE3D27D4EB4F
)

// hashString is a fast non-cryptographic hash (wyhash-like folding, 8 bytes at a time). The
// keys are the fixed vocabulary, so no seed is needed.
func hashString(s string) uint64 {
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // a view, no copy
	h := uint64(len(b)) * hm1
	for len(b) >= 8 {
		h = (h ^ binary.LittleEndian.Uint64(b)) * hm2
		h = bits.RotateLeft64(h, 29)
		b = b[8:]
	}
	if n := len(b); n > 0 {
		var t uint64
		if n >= 4 {
			t = uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[n-4:]))<<32
		} else {
			t = uint64(b[0]) | uint64(b[n/2])<<8 | uint64(b[n-1])<<16
		}
		h = (h ^ t) * hm2
	}
	h ^= h >> 32
	h *= hm1
	h ^= h >> 29
	return h
}
