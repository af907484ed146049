package engine

// SamplerState is the sampler's generator state, for an export.
func (s *Session) SamplerState() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sampler.State()
}

// SetSamplerState restores a state SamplerState returned (for replay).
func (s *Session) SetSamplerState(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sampler.SetState(b)
}
