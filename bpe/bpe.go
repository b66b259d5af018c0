package bpe

import (
	"fmt"
	"sync"
	"unsafe"
)

//go:generate go run ./internal/vocabgen/generate data

// The vocabularies' compact form, o200kData and cl100kData, is embedded by vocab_embed.go;
// a build with the tag parley_novocab (the format lab's WebAssembly, which fetches them from
// the server instead of carrying them) leaves them empty until Supply.

// Their prebuilt hash tables, o200kTab and cl100kTab, and lists of the three-byte strings
// inside their tokens, o200kTri and cl100kTri, are embedded beside them (empty in a
// parley_novocab build, which builds them once the vocabulary is supplied).

//go:generate go test -run TestTables -update-tables .

// Encoding is one of the byte-pair encodings. Its methods are safe for concurrent use.
type Encoding struct {
	name    string
	data    string
	tab     string // the prebuilt hash tables (vocab.go)
	tri     string // the list of three-byte strings inside tokens (cut.go)
	units   string // the unit tables (units.go)
	split   func(s string, i int) int
	pair    *[1 << 16]int32 // where its table of two-byte tokens goes (pairTables)
	special map[int]string  // special tokens, for Decode only

	once sync.Once
	v    *vocab
	err  error
}

// pairTables hold the encodings' tables of two-byte tokens outside the heap (they hold no
// pointers), so that loading an encoding allocates little and a short run of parley tokens
// needs no garbage collection.
var pairTables [2][1 << 16]int32

var encodings = []*Encoding{
	{
		name:  "o200k_base",
		pair:  &pairTables[0],
		data:  o200kData,
		tab:   o200kTab,
		tri:   o200kTri,
		units: o200kUnits,
		split: splitO200K,
		special: map[int]string{
			199999: "<|endoftext|>",
			200018: "<|endofprompt|>",
		},
	},
	{
		name:  "cl100k_base",
		pair:  &pairTables[1],
		data:  cl100kData,
		tab:   cl100kTab,
		tri:   cl100kTri,
		units: cl100kUnits,
		split: splitCL100K,
		special: map[int]string{
			100257: "<|endoftext|>",
			100258: "<|fim_prefix|>",
			100259: "<|fim_middle|>",
			100260: "<|fim_suffix|>",
			100276: "<|endofprompt|>",
		},
	},
}

// Names returns the names of the encodings Get knows, default first.
func Names() []string {
	names := make([]string, len(encodings))
	for i, e := range encodings {
		names[i] = e.name
	}
	return names
}

// Get returns the encoding called name ("o200k_base" or "cl100k_base"), loading its
// vocabulary on first use. Every call for the same name returns the same *Encoding.
func Get(name string) (*Encoding, error) {
	for _, e := range encodings {
		if e.name == name {
			if e.data == "" {
				return nil, fmt.Errorf("bpe: the %s vocabulary is not in this build (tag parley_novocab): Supply it before Get", name)
			}
			e.once.Do(e.load)
			if e.err != nil {
				return nil, e.err
			}
			return e, nil
		}
	}
	return nil, fmt.Errorf("bpe: unknown encoding %q (known: o200k_base, cl100k_base)", name)
}

// Data returns the compact vocabulary of the encoding called name, as this build holds it:
// what Supply takes. The server hands it to the format lab, so that the lab's WebAssembly
// need not carry a second copy.
func Data(name string) (string, error) {
	for _, e := range encodings {
		if e.name == name {
			if e.data == "" {
				return "", fmt.Errorf("bpe: the %s vocabulary is not in this build (tag parley_novocab)", name)
			}
			return e.data, nil
		}
	}
	return "", fmt.Errorf("bpe: unknown encoding %q (known: o200k_base, cl100k_base)", name)
}

// Supply gives a build without embedded vocabularies (tag parley_novocab) the compact
// vocabulary of one encoding, as Data returns it. It must come before the first Get of that
// encoding and must not run concurrently with Get. The data is loaded here, so a corrupt or
// truncated copy is an error now (and at every Get after); in a build that embeds the vocabulary,
// only the same bytes are accepted.
func Supply(name, data string) error {
	for _, e := range encodings {
		if e.name != name {
			continue
		}
		if e.data != "" {
			if e.data != data {
				return fmt.Errorf("bpe: Supply: the %s vocabulary is already present and differs", name)
			}
			return nil
		}
		e.data = data
		e.once.Do(e.load)
		if e.err != nil {
			return fmt.Errorf("bpe: Supply %s: %w", name, e.err)
		}
		return nil
	}
	return fmt.Errorf("bpe: unknown encoding %q (known: o200k_base, cl100k_base)", name)
}

func (e *Encoding) load() {
	loadClasses()
	e.v, e.err = parseVocab(e.data, e.tab, e.pair)
	if e.err == nil {
		e.v.triList, e.v.unitList = e.tri, e.units
	}
}

// Name returns the encoding's name, e.g. "o200k_base".
func (e *Encoding) Name() string { return e.name }

// Encode returns the token ids of s. Text that looks like a special token, such as
// "<|endoftext|>", is ordinary text (tiktoken's encode_ordinary).
func (e *Encoding) Encode(s string) []int {
	return e.AppendEncode(make([]int, 0, len(s)/3+1), s)
}

// AppendEncode appends the token ids of s to dst and returns the extended slice.
func (e *Encoding) AppendEncode(dst []int, s string) []int {
	if dst == nil {
		dst = make([]int, 0, len(s)/3+1)
	}
	v := e.v
	var m merger
	for i := 0; i < len(s); {
		j := e.split(s, i)
		dst, _ = v.encodePiece(s[i:j], dst, &m)
		i = j
	}
	m.release()
	return dst
}

// Count returns the number of tokens of s, len(e.Encode(s)), without building the slice.
// It allocates nothing.
func (e *Encoding) Count(s string) int {
	v := e.v
	var m merger
	n := 0
	for i := 0; i < len(s); {
		j := e.split(s, i)
		switch j - i {
		case 1: // one byte: a token
			n++
		case 2: // two bytes: a token or two
			n += 2 - int(uint32(v.pair[int(s[i])<<8|int(s[i+1])])>>31^1)
		default:
			n += v.countPiece(s[i:j], &m)
		}
		i = j
	}
	m.release()
	return n
}

// Decode returns the bytes of the tokens ids: the inverse of Encode. The special tokens'
// ids decode to their text (e.g. "<|endoftext|>"); ids that are no token decode to nothing.
func (e *Encoding) Decode(ids []int) []byte {
	v := e.v
	off := v.offsets()
	out := make([]byte, 0, len(ids)*4)
	for _, id := range ids {
		if id >= 0 && id < v.n {
			out = append(out, v.blob[off[id]:off[id+1]]...)
		} else if t, ok := e.special[id]; ok {
			out = append(out, t...)
		}
	}
	return out
}

// merger is what the pieces of one Encode or Count share: a scratch, taken from the spare
// list at the first piece that needs merging, and its cache of merged pieces.
type merger struct {
	sc      *scratch
	pc      *pieceCache
	longest int // the longest piece merged with sc
}

func (m *merger) scratch(v *vocab) *scratch {
	if m.sc == nil {
		m.sc = getScratch()
		m.pc = m.sc.pieceCache(v)
	}
	return m.sc
}

func (m *merger) release() {
	if m.sc != nil {
		putScratch(m.sc, m.longest)
		m.sc, m.pc = nil, nil
	}
}

// encodePiece appends the tokens of one piece to out (when out is not nil) and returns their
// number. Like tiktoken, a piece that is itself a token is that token, merged or not. A short
// piece that is not a token is looked up in the merger's cache of merged pieces before it is
// merged: its tokens depend only on its bytes, and text repeats its words.
func (v *vocab) encodePiece(p string, out []int, m *merger) ([]int, int) {
	if len(p) == 1 {
		if out != nil {
			out = append(out, int(v.byte1[p[0]]))
		}
		return out, 1
	}
	var h uint64
	if len(p) <= v.maxLen {
		var k8 uint64
		k8, h = keyHash(p)
		if r := v.rankPieceHash(p, k8, h); r != noRank {
			if out != nil {
				out = append(out, int(r))
			}
			return out, 1
		}
	}
	if len(p) > smallPiece {
		sc := m.scratch(v)
		m.longest = max(m.longest, len(p))
		if len(p) >= cutPiece {
			return v.mergeCut(p, out, m)
		}
		return v.mergeLong(p, sc, out)
	}
	if len(p) > pcKeyLen {
		return v.mergeSmall(p, out)
	}
	return v.mergeCached(p, h, out, m)
}

// countPiece returns the number of tokens of a piece of 3 bytes or more: encodePiece without
// the tokens. A piece of up to 8 bytes (most pieces) is hashed and looked up in the table of
// frequent tokens here, in the same way as keyHash and probe do, which spares Count four
// calls per piece.
func (v *vocab) countPiece(p string, m *merger) int {
	n := len(p)
	if n > 8 {
		_, k := v.encodePiece(p, nil, m)
		return k
	}
	var k8 uint64
	if b := unsafe.Pointer(unsafe.StringData(p)); n >= 4 {
		k8 = key48(b, n)
	} else {
		k8 = uint64(p[0]) | uint64(p[n/2])<<(8*(n/2)) | uint64(p[n-1])<<(8*(n-1))
	}
	h := (k8 ^ uint64(n)*hm1) * hm2
	h ^= h >> 29
	h *= hm2
	h ^= h >> 32
	want := uint64(n)<<metaLenShift | h>>metaTagShift<<metaTagShift
	const check = 0xFF<<metaLenShift | (1<<64-1)>>metaTagShift<<metaTagShift
	fb := filterBits(h)
	if v.hfilt[h>>20&(hotFilterWords-1)]&fb == fb {
		hot, mask := v.hot, v.hmask
		for i := h & mask; ; i = (i + 1) & mask {
			e := &hot[i]
			if e.meta == 0 {
				break
			}
			if e.meta&check == want && e.key == k8 {
				return 1
			}
		}
	}
	if v.filter[h>>20&v.fmask]&fb == fb && v.probe(v.table, v.mask, p, k8, h) != noRank {
		return 1
	}
	if n == 3 {
		// Three bytes that are no token: if either pair is a token, the lower one merges and
		// the only pair left would make the whole piece; so two tokens, or three.
		return 3 - int(uint32(v.pair[uint16(p[0])<<8|uint16(p[1])]&v.pair[uint16(p[1])<<8|uint16(p[2])])>>31^1)
	}
	_, k := v.mergeCached(p, h, nil, m)
	return k
}

// mergeCached merges a piece of 3..pcKeyLen bytes (hash h, from keyHash) through the merger's
// cache of merged pieces. The cache holds merges only, never the shortcut of a piece that is a
// token, so it serves the segments of cut.go too.
func (v *vocab) mergeCached(p string, h uint64, out []int, m *merger) ([]int, int) {
	m.scratch(v)
	e := &m.pc.e[h>>(64-pcBits)]
	if int(e.klen) != len(p) || string(e.key[:len(p)]) != p {
		var toks [blockMax]uint32
		n := v.mergeBlocks(p, &toks, m.sc)
		if n > pcToks {
			if out != nil {
				for _, t := range toks[:n] {
					out = append(out, int(t))
				}
			}
			return out, n
		}
		copy(e.key[:], p)
		e.klen, e.n = uint8(len(p)), uint8(n)
		e.toks = [pcToks]uint32(toks[:pcToks])
	}
	if out != nil {
		for _, t := range e.toks[:e.n] {
			out = append(out, int(t))
		}
	}
	return out, int(e.n)
}
