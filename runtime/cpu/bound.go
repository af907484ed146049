package cpu

// DecodeBytes is what one decode step at context position pos reads: every
// weight but the token embedding table (one row of it, unless it doubles as
// the output matrix) and the experts the token is not routed to, the
// keys and values of the positions attended to, and the recurrent layers'
// state, which every step reads and writes whole.
// Over the machine's read bandwidth it bounds decode speed.
func (b *Backend) DecodeBytes(pos int) int64 {
	p := b.plan
	n := p.ActiveWeightBytes
	if emb := b.embedding; emb != nil {
		// an untied table: one row is read
		n -= int64(len(emb.Data))
		if emb.Rows > 0 {
			n += int64(len(emb.Data)) / int64(emb.Rows)
		}
	}
	kv := p.CacheBytes(b.kv.typ, b.kv.typV, pos+1, 0) // in the cache's types
	return n + kv + 2*p.StateBytes()
}
