package a2c

// field is an optional string: a slot's value or its default.
type field struct {
	ok bool
	s  string
}

// state is what encoder and decoder both derive from the session so far: the session
// text splices point into, the numbered strings, and the defaults of the next line.
type state struct {
	text     []byte
	dictLen  int
	strs     map[string]int
	strList  []string
	lastFrom map[string]field // by kind
	lastTo   map[string]field
	prevTool field
	prevCall field
}

func newState(d *Dictionary) state {
	s := state{strs: map[string]int{}, lastFrom: map[string]field{}, lastTo: map[string]field{}}
	if d != nil && d.Text != "" {
		s.text = append(s.text, d.Text...)
		s.text = append(s.text, '\n')
		s.dictLen = len(s.text)
	}
	return s
}

func (s *state) register(v string) {
	if len(v) < refMin {
		return
	}
	if _, ok := s.strs[v]; ok {
		return
	}
	s.strs[v] = len(s.strList)
	s.strList = append(s.strList, v)
}
