package http

import (
	"encoding/json"
	"net/http"

	"github.com/parleyhq/parley"
)

type createRoomRequest struct {
	Name   string         `json:"name"`
	Policy *parley.Policy `json:"policy,omitempty"`
}

func (s *Server) handleCreateRoom(w http.ResponseWriter, r *http.Request, c *parley.Caller) error {
	var req createRoomRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	room, err := s.svc.CreateRoom(r.Context(), c, req.Name, req.Policy)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, room)
	return nil
}

func (s *Server) handleRooms(w http.ResponseWriter, r *http.Request, c *parley.Caller) error {
	rooms, err := s.svc.Rooms(r.Context(), c)
	if err != nil {
		return err
	}
	if rooms == nil {
		rooms = []*parley.Room{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"rooms": rooms})
	return nil
}

func (s *Server) handleRoom(w http.ResponseWriter, r *http.Request, c *parley.Caller) error {
	room, err := s.svc.Room(r.Context(), c, r.PathValue("room"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, room)
	return nil
}

// handleUpdatePolicy passes the patch through as bytes: only the service knows which fields
// were set, which a decoded Policy would lose.
func (s *Server) handleUpdatePolicy(w http.ResponseWriter, r *http.Request, c *parley.Caller) error {
	patch, err := readBody(w, r, maxBodyBytes)
	if err != nil {
		return err
	}
	var probe map[string]any
	if err := json.Unmarshal(patch, &probe); err != nil {
		return badRequest(`send a JSON object with the fields to change, e.g. {"format":"lenient"}`, "the policy patch is not a JSON object: %v", err)
	}
	room, err := s.svc.UpdatePolicy(r.Context(), c, r.PathValue("room"), patch)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, room)
	return nil
}

type addSeatRequest struct {
	Name string      `json:"name"`
	Role parley.Role `json:"role,omitempty"`
}

// seatToken is the one response that carries a seat's token; it is never shown again.
type seatToken struct {
	Room  string      `json:"room"`
	Name  string      `json:"name"`
	Role  parley.Role `json:"role"`
	Token string      `json:"token"`
}

func (s *Server) handleAddSeat(w http.ResponseWriter, r *http.Request, c *parley.Caller) error {
	var req addSeatRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.Role == "" {
		req.Role = parley.RoleAgent
	}
	seat, token, err := s.svc.AddSeat(r.Context(), c, r.PathValue("room"), req.Name, req.Role)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, seatToken{Room: seat.Room, Name: seat.Name, Role: seat.Role, Token: token})
	return nil
}

func (s *Server) handleSeats(w http.ResponseWriter, r *http.Request, c *parley.Caller) error {
	seats, err := s.svc.Seats(r.Context(), c, r.PathValue("room"))
	if err != nil {
		return err
	}
	if seats == nil {
		seats = []*parley.Seat{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"seats": seats})
	return nil
}

func (s *Server) handleRevokeSeat(w http.ResponseWriter, r *http.Request, c *parley.Caller) error {
	if err := s.svc.RevokeSeat(r.Context(), c, r.PathValue("room"), r.PathValue("seat")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) handleRotateSeat(w http.ResponseWriter, r *http.Request, c *parley.Caller) error {
	room, name := r.PathValue("room"), r.PathValue("seat")
	token, err := s.svc.RotateSeat(r.Context(), c, room, name)
	if err != nil {
		return err
	}
	out := seatToken{Room: room, Name: name, Token: token}
	// The role is not part of RotateSeat's answer; look it up so the response has the same
	// shape as seat creation. A failure here must not hide the new token, which is shown once.
	if seats, err := s.svc.Seats(r.Context(), c, room); err == nil {
		for _, st := range seats {
			if st.Name == name {
				out.Role = st.Role
			}
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
	return nil
}
