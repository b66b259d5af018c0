package bench

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
)

//go:embed study
var embedded embed.FS

// EmbeddedStudy returns the copy of the study fixtures compiled into the binary (see
// study/SOURCES.md), so the benchmark runs with no shared folder at hand.
func EmbeddedStudy() fs.FS {
	sub, err := fs.Sub(embedded, "study")
	if err != nil {
		panic(err) // the directory is embedded at build time; it cannot be missing
	}
	return sub
}

// Message is one study message: the same facts written in every format.
type Message struct {
	// Name is the message's folder name, e.g. "p2".
	Name string
	// Kind says what the message is ("partial status report"), from facts.json.
	Kind string
	// Facts is the number of atomic facts the message carries, from facts.json.
	Facts int
	// Files maps a file name in the folder ("prose.txt") to its exact contents.
	Files map[string]string
}

// File returns the contents of one of the message's files.
func (m Message) File(name string) (string, error) {
	s, ok := m.Files[name]
	if !ok {
		return "", fmt.Errorf("bench: %s has no %s", m.Name, name)
	}
	return s, nil
}

// Study is a set of messages, in folder-name order.
type Study struct {
	Messages []Message
}

// Facts returns the number of facts of all messages together.
func (s *Study) Facts() int {
	n := 0
	for _, m := range s.Messages {
		n += m.Facts
	}
	return n
}

// LoadStudy reads a study folder: every subdirectory that holds a facts.json is a message.
func LoadStudy(fsys fs.FS) (*Study, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("bench: read study: %w", err)
	}
	st := &Study{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		m, ok, err := loadMessage(fsys, e.Name())
		if err != nil {
			return nil, err
		}
		if ok {
			st.Messages = append(st.Messages, m)
		}
	}
	if len(st.Messages) == 0 {
		return nil, fmt.Errorf("bench: no message folders (a folder with facts.json) in the study")
	}
	sort.Slice(st.Messages, func(i, j int) bool { return st.Messages[i].Name < st.Messages[j].Name })
	return st, nil
}

func loadMessage(fsys fs.FS, dir string) (Message, bool, error) {
	raw, err := fs.ReadFile(fsys, path.Join(dir, "facts.json"))
	if err != nil {
		return Message{}, false, nil // not a message folder
	}
	var key struct {
		Kind  string            `json:"kind"`
		Facts []json.RawMessage `json:"facts"`
	}
	if err := json.Unmarshal(raw, &key); err != nil {
		return Message{}, false, fmt.Errorf("bench: %s/facts.json: %w", dir, err)
	}
	if len(key.Facts) == 0 {
		return Message{}, false, fmt.Errorf("bench: %s/facts.json lists no facts", dir)
	}
	m := Message{Name: dir, Kind: key.Kind, Facts: len(key.Facts), Files: map[string]string{}}
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return Message{}, false, fmt.Errorf("bench: read %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return Message{}, false, fmt.Errorf("bench: %w", err)
		}
		m.Files[e.Name()] = string(b)
	}
	return m, true, nil
}
