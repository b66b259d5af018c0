package bpe

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"sync"
	"unsafe"
)

// vocab is one encoding's mergeable tokens: their bytes in rank order and an open-addressing
// hash table from token bytes to rank.
type vocab struct {
	blob   string // the bytes of token 0, then token 1, ...
	lens   string // the length of token 0, then token 1, ... (a byte each)
	n      int    // the number of tokens
	hot    []slot // the tokens of rank < hotRanks (the frequent ones), in a table that stays in cache
	hmask  uint64
	table  []slot // the other tokens
	mask   uint64
	filter []uint64 // a blocked Bloom filter of all the tokens (3 bits in one word per token),
	fmask  uint64   // small enough for L2: most lookups that miss (merges try many) touch no table
	// hfilt is the same for the hot tokens alone, small enough for L1: a merge candidate of
	// higher rank (most of random letters') skips the hot table, whose probe would miss the cache.
	hfilt  [hotFilterWords]uint64
	maxLen int
	byte1  [256]uint32 // rank of each one-byte token (all 256 exist)
	t3     tokens3     // the three-byte tokens, in a table of their own (rank3)
	pair   []int32     // [65536] rank of the two-byte token b0<<8|b1, or -1

	offOnce sync.Once // off, made on first use (Decode): counting never needs it
	off     []uint32  // token r is blob[off[r]:off[r+1]]

	cutOnce  sync.Once // the bitmaps of cut.go, made on the first long piece
	cut      *cutTable
	unitOnce sync.Once // the tables of units.go, made with the bitmaps of cut.go
	unitTab  *unitTables
	triList  string // the list of three-byte strings inside tokens (data/*.tri), if embedded
	unitList string // the unit tables (data/*.unit), if embedded
}

// slot is one entry of the hash tables: the token's first 8 bytes (zero-padded), so that
// most lookups touch one cache line and never the token bytes, and meta:
//
//	bits  0-19  rank+1 (0: empty slot)
//	bits 20-27  length
//	bits 28-49  offset of the token's bytes in blob (read only for tokens over 8 bytes)
//	bits 50-63  hash tag
type slot struct {
	key  uint64
	meta uint64
}

const (
	metaRankBits = 20
	metaLenShift = 20
	metaOffShift = 28
	metaTagShift = 50
	metaOffMask  = 1<<22 - 1
)

const noRank = ^uint32(0)

// hotRanks: tokens of lower rank go into the small hot table. Ranks follow the merge order of
// training, so low ranks are frequent: on the test corpus 71% of o200k_base's tokens and 78%
// of cl100k_base's are below 8192.
const hotRanks = 8192

// tokens3 holds the three-byte tokens (most merge candidates of random letters have three
// bytes), so that their lookups read small arrays in which similar strings lie close, never
// the Bloom filter or the big table. For b0 b1 b2, with k = b0<<8 | b1:
//
//	pre      bit k is set when a three-byte token starts with b0 b1 (8 KiB)
//	preAt[w] the number of bits set in pre's words before w: b0 b1's row is preAt[k>>6] plus
//	         the bits set below k in its word
//	bits[row] bit b2 is set when b0 b1 b2 is a token (4 words: 32 bytes, one cache line)
//	at[row]  the index in ranks of the row's first token (low 32 bits), and in byte w+4 the
//	         number of the row's tokens before its word w (w = 1, 2, 3; byte 4 is 0)
//	ranks[i] the ranks of the tokens, in the order of their bytes
//
// On o200k_base that is 18,185 tokens in 2,796 rows, 190 KiB in all, of which a merge of
// random lower-case letters reads 10 KiB of pre and preAt and 21 KiB of rows.
type tokens3 struct {
	pre   *[1 << 16 / 64]uint64
	preAt *[1 << 16 / 64]uint16
	bits  [][4]uint64
	at    []uint64
	ranks []uint32
}

// rank3 returns the rank of the three-byte token b0 b1 b2, or noRank. (rankShort has a copy.)
func (v *vocab) rank3(b0, b1, b2 byte) uint32 {
	k := uint16(b0)<<8 | uint16(b1)
	pw, pb := v.t3.pre[k>>6], uint64(1)<<(k&63)
	if pw&pb == 0 {
		return noRank
	}
	row := int(v.t3.preAt[k>>6]) + bits.OnesCount64(pw&(pb-1))
	x, bit := v.t3.bits[row][b2>>6], uint64(1)<<(b2&63)
	if x&bit == 0 {
		return noRank
	}
	return v.t3.ranks[at3(v.t3.at[row], b2)+uint32(bits.OnesCount64(x&(bit-1)))]
}

// at3 is the index in ranks of the first token of a row's word b2>>6, a its entry of at.
func at3(a uint64, b2 byte) uint32 { return uint32(a) + uint32(a>>(32+8*(b2>>6)))&0xff }

// build3 makes t3 from the tokens of three bytes; rows is the number of their distinct
// first two bytes, n3 their number.
func (v *vocab) build3(rows, n3 int) {
	t := tokens3{pre: new([1 << 16 / 64]uint64), preAt: new([1 << 16 / 64]uint16),
		bits: make([][4]uint64, rows), at: make([]uint64, rows), ranks: make([]uint32, n3)}
	off := v.offsets()
	for r := 0; r < v.n; r++ {
		if v.lens[r] == 3 {
			k := uint16(v.blob[off[r]])<<8 | uint16(v.blob[off[r]+1])
			t.pre[k>>6] |= 1 << (k & 63)
		}
	}
	var n uint16
	for w, x := range t.pre {
		t.preAt[w] = n
		n += uint16(bits.OnesCount64(x))
	}
	row := func(b string) int {
		k := uint16(b[0])<<8 | uint16(b[1])
		return int(t.preAt[k>>6]) + bits.OnesCount64(t.pre[k>>6]&(1<<(k&63)-1))
	}
	for r := 0; r < v.n; r++ {
		if v.lens[r] == 3 {
			b := v.blob[off[r]:]
			t.bits[row(b)][b[2]>>6] |= 1 << (b[2] & 63)
		}
	}
	var i uint32
	for k := range t.bits {
		a := uint64(i)
		c := 0
		for j, w := range t.bits[k] {
			a |= uint64(c) << (32 + 8*j)
			c += bits.OnesCount64(w)
		}
		t.at[k] = a
		i += uint32(c)
	}
	for r := 0; r < v.n; r++ {
		if v.lens[r] == 3 {
			b := v.blob[off[r]:]
			k := row(b)
			t.ranks[at3(t.at[k], b[2])+uint32(bits.OnesCount64(t.bits[k][b[2]>>6]&(1<<(b[2]&63)-1)))] = uint32(r)
		}
	}
	v.t3 = t
}

// hotFilterWords is the size of the Bloom filter of the hot tokens (16 KiB: 16 bits a token).
const hotFilterWords = 2048

// parseVocab reads the compact form written by internal/vocabgen (see its doc) and builds the
// tables, or takes them from tab (written by writeTables) when it holds them. The table of
// two-byte tokens goes into pair, or a new array if pair is nil.
func parseVocab(data, tab string, pair *[1 << 16]int32) (*vocab, error) {
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
	if pair == nil {
		pair = new([1 << 16]int32)
	}
	v := &vocab{blob: blob, lens: lens, n: n, pair: pair[:]}
	for i := range v.pair {
		v.pair[i] = -1
	}
	for i := range v.byte1 {
		v.byte1[i] = noRank
	}
	hotN := min(n, hotRanks)
	var o uint32
	var pre3 [1 << 16 / 64]uint64 // the first two bytes of the three-byte tokens
	n3, rows3 := 0, 0
	for r := 0; r < n; r++ {
		l := int(lens[r])
		if int(o)+l > len(blob) {
			return nil, errors.New("bpe: corrupt vocabulary (size)")
		}
		switch l {
		case 1:
			v.byte1[blob[o]] = uint32(r)
		case 2:
			v.pair[int(blob[o])<<8|int(blob[o+1])] = int32(r)
		case 3:
			k := int(blob[o])<<8 | int(blob[o+1])
			if pre3[k>>6]&(1<<(k&63)) == 0 {
				pre3[k>>6] |= 1 << (k & 63)
				rows3++
			}
			n3++
		}
		if r < hotN {
			_, h := keyHash(blob[o : int(o)+l])
			v.hfilt[h>>20&(hotFilterWords-1)] |= filterBits(h)
		}
		o += uint32(l)
		v.maxLen = max(v.maxLen, l)
	}
	if n >= 1<<metaRankBits-1 || o > metaOffMask {
		return nil, errors.New("bpe: vocabulary too large for the table layout")
	}
	if int(o) != len(blob) {
		return nil, errors.New("bpe: corrupt vocabulary (size)")
	}
	for _, r := range v.byte1 {
		if r == noRank {
			return nil, errors.New("bpe: corrupt vocabulary (a byte has no token)")
		}
	}
	hotSize := 1 << bits.Len(uint(hotN*2))    // load factor 1/4..1/2
	size := 1 << bits.Len(uint((n-hotN)*4/3)) // load factor 3/8..3/4: the filter spares most misses the probing
	words := 1 << bits.Len(uint(n/8))         // 8 to 16 bits per token: ~1-5% false positives
	v.hmask, v.mask, v.fmask = uint64(hotSize-1), uint64(size-1), uint64(words-1)
	if rows3 >= 1<<16-1 {
		return nil, errors.New("bpe: vocabulary too large for the table layout")
	}
	if v.readTables(tab, hotSize, size, words, rows3, n3) {
		return v, nil
	}
	v.build3(rows3, n3)
	v.hot = make([]slot, hotSize)
	v.table = make([]slot, size)
	v.filter = make([]uint64, words)
	off := v.offsets()
	for r := 0; r < n; r++ {
		t := blob[off[r]:off[r+1]]
		k8, h := keyHash(t)
		v.filter[h>>20&v.fmask] |= filterBits(h)
		tab, mask := v.hot, v.hmask
		if r >= hotN {
			tab, mask = v.table, v.mask
		}
		i := h & mask
		for tab[i].meta != 0 {
			i = (i + 1) & mask
		}
		tab[i] = slot{k8, uint64(r+1) | uint64(len(t))<<metaLenShift | uint64(off[r])<<metaOffShift | h>>metaTagShift<<metaTagShift}
	}
	return v, nil
}

// The tables file (data/*.tab, made by go generate: TestTables -update-tables) holds the hash
// tables, the filter and the table of three-byte tokens exactly as parseVocab builds them, so
// that loading an encoding costs no hashing and no scattered writes: tabMagic, then the hot
// table, the table and the filter, each a little-endian array of 64-bit words, then t3's
// row (16-bit words), bits (64-bit), base and ranks (32-bit). TestTables checks it against a
// build.
//
// tabMagic is 32 bytes long. The linker aligns a large embedded file to 32 bytes (its largest
// alignment on amd64 and arm64), so the tables start 32-byte aligned too and no 16-byte slot
// straddles two cache lines. With an 8-byte header, one slot in four did: a probe of the big
// table touched 1.52 cache lines on average instead of 1.28 (o200k_base, random letters).
const tabMagic = "PBPT3\n\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"

// readTables takes the tables from tab if it holds tables of these sizes, as a view of the
// embedded bytes when they are aligned (a copy otherwise). It reports false on a big-endian
// machine, where the tables are built instead.
func (v *vocab) readTables(tab string, hotSize, size, words, rows3, n3 int) bool {
	want := len(tabMagic) + 16*hotSize + 16*size + 8*words + 8<<10 + 2<<10 + 32*rows3 + 8*rows3 + 4*n3
	if len(tab) != want || tab[:len(tabMagic)] != tabMagic || binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		return false
	}
	tab = tab[len(tabMagic):]
	words64 := func(s string) []uint64 {
		p := unsafe.StringData(s)
		if uintptr(unsafe.Pointer(p))%8 == 0 {
			return unsafe.Slice((*uint64)(unsafe.Pointer(p)), len(s)/8) // read only
		}
		w := make([]uint64, len(s)/8)
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), len(s)), s)
		return w
	}
	slots := func(s string) []slot {
		w := words64(s)
		return unsafe.Slice((*slot)(unsafe.Pointer(&w[0])), len(w)/2)
	}
	v.hot = slots(tab[:16*hotSize])
	tab = tab[16*hotSize:]
	v.table = slots(tab[:16*size])
	tab = tab[16*size:]
	v.filter = words64(tab[:8*words])
	tab = tab[8*words:]
	v.t3.pre = (*[1 << 16 / 64]uint64)(view[uint64](tab[:8<<10]))
	v.t3.preAt = (*[1 << 16 / 64]uint16)(view[uint16](tab[8<<10 : 10<<10]))
	tab = tab[10<<10:]
	v.t3.bits = view[[4]uint64](tab[:32*rows3])
	tab = tab[32*rows3:]
	v.t3.at = view[uint64](tab[:8*rows3])
	v.t3.ranks = view[uint32](tab[8*rows3:])
	return true
}

// view returns s as a slice of T (a type without pointers), read only when s is aligned for
// T (a copy otherwise).
func view[T any](s string) []T {
	var z T
	size := int(unsafe.Sizeof(z))
	if len(s) == 0 {
		return nil
	}
	p := unsafe.StringData(s)
	if uintptr(unsafe.Pointer(p))%unsafe.Alignof(z) == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(p)), len(s)/size)
	}
	w := make([]T, len(s)/size)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), len(s)), s)
	return w
}

// writeTables returns the tables file of v (see tabMagic).
func (v *vocab) writeTables() []byte {
	out := []byte(tabMagic)
	for _, t := range [][]slot{v.hot, v.table} {
		for _, e := range t {
			out = binary.LittleEndian.AppendUint64(out, e.key)
			out = binary.LittleEndian.AppendUint64(out, e.meta)
		}
	}
	for _, w := range v.filter {
		out = binary.LittleEndian.AppendUint64(out, w)
	}
	for _, x := range v.t3.pre {
		out = binary.LittleEndian.AppendUint64(out, x)
	}
	for _, x := range v.t3.preAt {
		out = binary.LittleEndian.AppendUint16(out, x)
	}
	for _, b := range v.t3.bits {
		for _, w := range b {
			out = binary.LittleEndian.AppendUint64(out, w)
		}
	}
	for _, x := range v.t3.at {
		out = binary.LittleEndian.AppendUint64(out, x)
	}
	for _, x := range v.t3.ranks {
		out = binary.LittleEndian.AppendUint32(out, x)
	}
	return out
}

// offsets returns off, the start of each token's bytes in blob and the end of the last one.
func (v *vocab) offsets() []uint32 {
	v.offOnce.Do(func() {
		off := make([]uint32, v.n+1)
		var o uint32
		for r := 0; r < v.n; r++ {
			off[r] = o
			o += uint32(v.lens[r])
		}
		off[v.n] = o
		v.off = off
	})
	return v.off
}

// token returns the bytes of token r.
func (v *vocab) token(r uint32) string {
	off := v.offsets()
	return v.blob[off[r]:off[r+1]]
}

// rank returns the rank of the token with bytes t, or noRank. For lookups that usually fail
// (merge candidates): the Bloom filter first.
func (v *vocab) rank(t string) uint32 {
	if n := len(t); n >= 3 && n <= 8 {
		return v.rankShort(t)
	}
	if len(t) > v.maxLen {
		return noRank
	}
	k8, h := keyHash(t)
	fb := filterBits(h)
	if v.filter[h>>20&v.fmask]&fb != fb {
		return noRank
	}
	if v.hfilt[h>>20&(hotFilterWords-1)]&fb == fb {
		if r := v.probe(v.hot, v.hmask, t, k8, h); r != noRank {
			return r
		}
	}
	return v.probe(v.table, v.mask, t, k8, h)
}

// rankShort is rank for 3 to 8 bytes (most merge candidates), with keyHash and the probes
// written out: no call.
func (v *vocab) rankShort(t string) uint32 {
	n := len(t)
	b := unsafe.Pointer(unsafe.StringData(t))
	if n < 4 { // rank3, written out
		k := uint16(*(*byte)(b))<<8 | uint16(*(*byte)(unsafe.Add(b, 1)))
		pw, pb := v.t3.pre[k>>6], uint64(1)<<(k&63)
		if pw&pb == 0 {
			return noRank
		}
		b2 := *(*byte)(unsafe.Add(b, 2))
		row := int(v.t3.preAt[k>>6]) + bits.OnesCount64(pw&(pb-1))
		x, bit := v.t3.bits[row][b2>>6], uint64(1)<<(b2&63)
		if x&bit == 0 {
			return noRank
		}
		return v.t3.ranks[at3(v.t3.at[row], b2)+uint32(bits.OnesCount64(x&(bit-1)))]
	}
	k8 := key48(b, n)
	h := (k8 ^ uint64(n)*hm1) * hm2
	h ^= h >> 29
	h *= hm2
	h ^= h >> 32
	fb := filterBits(h)
	if v.filter[h>>20&v.fmask]&fb != fb {
		return noRank
	}
	want := uint64(n)<<metaLenShift | h>>metaTagShift<<metaTagShift
	const check = 0xFF<<metaLenShift | (1<<64-1)>>metaTagShift<<metaTagShift
	tab, mask := v.hot, v.hmask
	if v.hfilt[h>>20&(hotFilterWords-1)]&fb == fb {
		for i := h & mask; ; i = (i + 1) & mask {
			e := &tab[i]
			if e.meta == 0 {
				break
			}
			if e.meta&check == want && e.key == k8 {
				return uint32(e.meta&(1<<metaRankBits-1)) - 1
			}
		}
	}
	tab, mask = v.table, v.mask
	for i := h & mask; ; i = (i + 1) & mask {
		e := &tab[i]
		if e.meta == 0 {
			return noRank
		}
		if e.meta&check == want && e.key == k8 {
			return uint32(e.meta&(1<<metaRankBits-1)) - 1
		}
	}
}

// rankPieceHash is rank for lookups that usually succeed (whole pieces): the hot table first.
// k8 and h are keyHash(t), and len(t) <= v.maxLen.
func (v *vocab) rankPieceHash(t string, k8, h uint64) uint32 {
	fb := filterBits(h)
	if v.hfilt[h>>20&(hotFilterWords-1)]&fb == fb {
		if r := v.probe(v.hot, v.hmask, t, k8, h); r != noRank {
			return r
		}
	}
	if v.filter[h>>20&v.fmask]&fb != fb {
		return noRank
	}
	return v.probe(v.table, v.mask, t, k8, h)
}

// filterBits are the three bits of the hash h in its word of the Bloom filter.
func filterBits(h uint64) uint64 { return 1<<(h>>46&63) | 1<<(h>>52&63) | 1<<(h>>58) }

// probe looks t (first 8 bytes k8, hash h) up in one table.
func (v *vocab) probe(tab []slot, mask uint64, t string, k8, h uint64) uint32 {
	want := uint64(len(t))<<metaLenShift | h>>metaTagShift<<metaTagShift
	const check = 0xFF<<metaLenShift | (1<<64-1)>>metaTagShift<<metaTagShift
	for i := h & mask; ; i = (i + 1) & mask {
		e := &tab[i]
		m := e.meta
		if m == 0 {
			return noRank
		}
		if m&check == want && e.key == k8 {
			if len(t) <= 8 {
				return uint32(m&(1<<metaRankBits-1)) - 1
			}
			off := int(m >> metaOffShift & metaOffMask)
			if v.blob[off+8:off+len(t)] == t[8:] {
				return uint32(m&(1<<metaRankBits-1)) - 1
			}
		}
	}
}

const (
	hm1 = 0x9E3779B97F4A7C15
	hm2 = 0xC2B2AE3D27D4EB4F
)

// le32 and le64 are the four and eight bytes at b as little-endian numbers, as keyHash reads
// them (one load on the machines Go runs on, most of them little-endian).
func le32(b unsafe.Pointer) uint32 { return binary.LittleEndian.Uint32(unsafe.Slice((*byte)(b), 4)) }
func le64(b unsafe.Pointer) uint64 { return binary.LittleEndian.Uint64(unsafe.Slice((*byte)(b), 8)) }

// key48 is keyHash's k8 for the n bytes at b, 4 <= n <= 8: the first four bytes and the last
// four, little-endian, overlapping where n < 8. rankShort and countPiece make their keys with
// it too, so the keys of the tables and of every lookup are one computation.
func key48(b unsafe.Pointer, n int) uint64 {
	return uint64(le32(b)) | uint64(le32(unsafe.Add(b, n-4)))<<(8*(n-4))
}

// keyHash returns the first 8 bytes of t (little-endian, zero-padded) and a hash of t. The
// hash is fast and unseeded: the keys are the fixed vocabulary.
func keyHash(t string) (k8, h uint64) {
	b := unsafe.Slice(unsafe.StringData(t), len(t)) // a view, no copy
	n := len(b)
	switch {
	case n >= 8:
		k8 = binary.LittleEndian.Uint64(b)
	case n >= 4:
		k8 = key48(unsafe.Pointer(&b[0]), n)
	case n > 0:
		k8 = uint64(b[0]) | uint64(b[n/2])<<(8*(n/2)) | uint64(b[n-1])<<(8*(n-1))
	}
	h = (k8 ^ uint64(n)*hm1) * hm2
	if n > 8 {
		b = b[8:]
		for len(b) >= 8 {
			h = bits.RotateLeft64(h, 29) ^ binary.LittleEndian.Uint64(b)
			h *= hm1
			b = b[8:]
		}
		if m := len(b); m > 0 {
			var t uint64
			if m >= 4 {
				t = uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[m-4:]))<<32
			} else {
				t = uint64(b[0]) | uint64(b[m/2])<<8 | uint64(b[m-1])<<16
			}
			h = (bits.RotateLeft64(h, 29) ^ t) * hm1
		}
	}
	h ^= h >> 29
	h *= hm2
	h ^= h >> 32
	return k8, h
}
