package cpu

// DecodeBytes is what one decode step at context position pos reads: every
// weight but the token embedding table (one row of it, unless it doubles as
// the output matrix) and the experts the token is not routed to, the
// keys and values of the positions attended to, and the recurrent layers'
// state, which every step reads and writes whole.
// Over the machine's read bandwidth it bounds decode speed.
func (b *Backend) DecodeBytes(pos int) int64 {
	m := b.m
	n := m.ActiveWeightBytes()
	emb := int64(len(m.TokenEmbd.Data))
	if len(m.Output.Data) == 0 || &m.Output.Data[0] != &m.TokenEmbd.Data[0] {
		n -= emb
		if m.TokenEmbd.Rows > 0 {
			n += emb / int64(m.TokenEmbd.Rows)
		}
	}
	kv := m.KVBytes(pos+1, b.opts.KVType.Bytes())
	return n + kv + 2*m.StateBytes()
}
