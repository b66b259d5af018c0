package room

// PageCacheSize reports, for tests, the bytes the page cache counts itself as holding, its
// entries, and its budget.
func (s *Service) PageCacheSize() (used int64, entries int, budget int64) {
	used, entries = s.pages.size()
	return used, entries, s.pages.budget
}
