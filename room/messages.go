package room

import (
	"context"

	"github.com/parleyhq/parley"
)

// Messages returns one page of the room's stored messages (see parley.RoomService.Messages):
// the messages the history page after `after` holds, as stored, with the room's last seq. An
// edge renders each one's history text with textline.AppendMessage, the bytes History serves.
//
// Store reads: one for the messages and one for the room's last seq (which also finds a room
// that does not exist), and under a held context one more to confirm the token. A read of the
// latest messages reads the last seq first, then the messages before it; seqs are gapless
// from 1, so that is the room's last limit messages.
//
// A counted read (parley.CountRead) by a seat is counted as History counts one: the tokens
// of the messages' history text, the prompt-cache projection that follows the seat's reads
// (a read that starts where the seat's previous one started re-reads a prefix), and one
// read. Nothing is counted for a read that returns no message.
func (s *Service) Messages(ctx context.Context, c *parley.Caller, room string, after int64, limit int, count parley.ReadCount) ([]*parley.Message, int64, error) {
	if err := canSee(c, room); err != nil {
		return nil, 0, err
	}
	if limit <= 0 {
		limit = parley.HistoryPageMessages
	}
	latest := after < 0
	var last int64
	var err error
	if latest {
		if last, err = s.lastSeq(ctx, room); err != nil {
			return nil, 0, err
		}
		after = max(0, last-int64(limit))
	}
	msgs, err := s.store.Messages(ctx, room, after, limit)
	if err != nil {
		return nil, 0, s.internal(ctx, "messages", err)
	}
	if !latest {
		if last, err = s.lastSeq(ctx, room); err != nil {
			return nil, 0, err
		}
	}
	if len(msgs) > 0 {
		last = max(last, msgs[len(msgs)-1].Seq)
	}

	// Cut to one page of history text: from the front, as History pages, or, for the
	// latest, from the back, so the newest stay.
	blocks := make([][]byte, len(msgs))
	var size int64
	keep := len(msgs)
	for i := range msgs {
		j := i
		if latest {
			j = len(msgs) - 1 - i
		}
		b := AppendMessage(nil, msgs[j])
		if i > 0 && size+int64(len(b)) > parley.HistoryPageBytes {
			keep = i
			break
		}
		size += int64(len(b))
		blocks[j] = b
	}
	if latest {
		msgs, blocks = msgs[len(msgs)-keep:], blocks[len(msgs)-keep:]
	} else {
		msgs, blocks = msgs[:keep], blocks[:keep]
	}
	if len(msgs) == 0 {
		return []*parley.Message{}, last, nil
	}

	// As History: nothing read is returned once the hold's token has stopped being valid.
	if err := s.confirmHold(ctx); err != nil {
		return nil, 0, err
	}
	if count == parley.CountRead && c.Seat != nil {
		start := msgs[0].Seq - 1
		rd := s.startRead(room, c.Seat.Name, start)
		for i, m := range msgs {
			rd.add(s, room, m.Seq, blocks[i])
		}
		s.endRead(ctx, room, c.Seat.Name, rd, msgs[len(msgs)-1].Seq)
	}
	return msgs, last, nil
}

// lastSeq returns the room's last seq; ENOTFOUND when there is no such room.
func (s *Service) lastSeq(ctx context.Context, room string) (int64, error) {
	last, err := s.store.LastSeq(ctx, room)
	if parley.ErrorCode(err) == parley.ENOTFOUND {
		return 0, parley.Errorf(parley.ENOTFOUND, "no room %s", room)
	}
	if err != nil {
		return 0, s.internal(ctx, "messages", err)
	}
	return last, nil
}
