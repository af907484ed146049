// The split rule of flash-decoding, shared by attention.comp (which
// positions a split takes, how many splits are live for the merge),
// and mirrored by attnChunk in runtime/vk/tuning.go (TestAttnSplits): the
// live span of a step is cut into at most z chunks of whole multiples of
// gran positions, as few as cover it. A short span so takes one or a few
// workgroups, a long one all z, each with a near-equal share; the recorded
// dispatch (z workgroups) never changes.

// attn_chunk is the positions per split for a live span of live >= 1.
uint attn_chunk(uint live, uint z, uint gran) {
	uint per = (live + z - 1) / z;
	return (per + gran - 1) / gran * gran;
}

// attn_live_splits is how many of the z splits hold positions.
uint attn_live_splits(uint live, uint z, uint gran) {
	uint c = attn_chunk(live, z, gran);
	return (live + c - 1) / c;
}
