package servertest

// PID is the process id of a server started with Start, 0 for an in-process one: a test reads
// the process's memory figures (/proc/PID/status) with it.
func (s *Server) PID() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}
