#version 450
// The step's (token, slot) pairs grouped by expert, for the grouped expert
// product (matmul.comp's MOE): from the ids moe_route.comp wrote (pair
// i = token·K + slot names expert ids[i]) it writes to G
//   [e]          the number of pairs that chose expert e
//   [E + e]      where expert e's pairs start in the list (the sum of the
//                counts of the experts before it)
//   [2E + j]     the list: pair indices, expert 0's first, each expert's in
//                pair order (token order, as a token picks an expert once)
// so the order, and with it every sum the product makes, depends only on
// the routing: the same on every run and every device. The ids never leave
// the device.
//
// One workgroup: the ids (ntok·K of them, at most NMAX) are copied into
// shared memory, then lane l takes experts l, l + WG, ...: it counts its
// expert's pairs, adds up the counts before it, and writes its pairs in
// order. That is E·ntok·K comparisons, a few microseconds even with 128
// experts of 8 per token over 64 tokens, next to the products it feeds
// (which read every chosen expert's weights); no atomics, so no order to
// sort out afterwards.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint E = 8;    // experts
layout(constant_id = 2) const uint K = 2;    // experts per token
layout(constant_id = 3) const uint NMAX = 1; // pairs the batch can have: capacity × K

layout(binding = 0) uniform usamplerBuffer IDS; // expert per pair, R32_UINT view
layout(std430, binding = 1) writeonly buffer G { uint g[]; };
layout(std430, binding = 2) readonly buffer Step { uint ntok; uint pos; };

shared uint sid[NMAX];
shared uint cnt[E];

void main() {
	const uint lid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
	const uint n = min(ntok * K, NMAX);
	for (uint i = lid; i < n; i += wg) {
		sid[i] = texelFetch(IDS, int(i)).x;
	}
	barrier();
	for (uint e = lid; e < E; e += wg) {
		uint c = 0;
		for (uint i = 0; i < n; i++) {
			c += sid[i] == e ? 1u : 0u;
		}
		cnt[e] = c;
	}
	barrier();
	for (uint e = lid; e < E; e += wg) {
		uint off = 0;
		for (uint f = 0; f < e; f++) {
			off += cnt[f];
		}
		const uint c = cnt[e];
		g[e] = c;
		g[E + e] = off;
		uint at = 2 * E + off;
		for (uint i = 0; i < n && at < 2 * E + off + c; i++) {
			if (sid[i] == e) {
				g[at] = i;
				at++;
			}
		}
	}
}
