package sqlstore

import "github.com/parleyhq/parley"

// The errors a store returns for what a caller asked of it. They carry a code and a message
// and no hint: the service (room/) says how to fix what the user did.

func RoomNotFound(room string) error {
	return parley.Errorf(parley.ENOTFOUND, "room %q not found", room)
}

func SeatNotFound(room, name string) error {
	return parley.Errorf(parley.ENOTFOUND, "seat %q not found in room %q", name, room)
}

// NoSuchToken is SeatByToken's ENOTFOUND.
func NoSuchToken() error {
	return parley.Errorf(parley.ENOTFOUND, "no seat has this token")
}

// RunNotFound is Run's ENOTFOUND.
func RunNotFound(room, id string) error {
	return parley.Errorf(parley.ENOTFOUND, "run %q not found in room %q", id, room)
}

func MessageNotFound(room string, seq int64) error {
	return parley.Errorf(parley.ENOTFOUND, "message #%d not found in room %q", seq, room)
}

// DuplicateError refuses a repeat of the seat's message #orig; Fields["seq"] holds orig.
func DuplicateError(orig int64) error {
	return parley.Errorf(parley.ECONFLICT, "this repeats your message #%d", orig).With("seq", orig)
}

// AskNotOpen refuses a lapse of an ask that was answered or lapsed meanwhile.
func AskNotOpen(seq int64, line int) error {
	return parley.Errorf(parley.ECONFLICT, "ask #%d line %d is no longer open", seq, line)
}

// TokenTaken refuses a token hash that another seat holds.
func TokenTaken() error {
	return parley.Errorf(parley.ECONFLICT, "token already belongs to another seat")
}
