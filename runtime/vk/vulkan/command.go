package vulkan

import (
	"fmt"
	"time"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

func (d *Device) newCommandBuffer() (vk.CommandBuffer, error) {
	ai := &vk.CommandBufferAllocateInfo{SType: vk.StructureTypeCommandBufferAllocateInfo, CommandPool: d.pool, Level: vk.CommandBufferLevelPrimary, CommandBufferCount: 1}
	cbs := make([]vk.CommandBuffer, 1)
	r := vk.AllocateCommandBuffers(d.dev, ai, cbs)
	ai.Free()
	if err := check("vkAllocateCommandBuffers", r, ""); err != nil {
		return nil, err
	}
	return cbs[0], nil
}

func fillZero(cb vk.CommandBuffer, b *Buffer) {
	vk.CmdFillBuffer(cb, b.buf, 0, vk.DeviceSize(b.Size), 0)
}

// Zero fills the buffers with zeros in one submission and waits for it.
func (d *Device) Zero(bufs ...*Buffer) error {
	return d.oneShot(func(cb vk.CommandBuffer) {
		for _, b := range bufs {
			fillZero(cb, b)
		}
	})
}

// Submit submits the recorders' command buffers in one submission, in
// order, and waits for them. Work in one submission is ordered by the
// barriers recorded at the end of each buffer.
func (d *Device) Submit(rs ...*Recorder) error {
	cbs := make([]vk.CommandBuffer, len(rs))
	n := 0
	for i, r := range rs {
		cbs[i] = r.cb
		n += r.Dispatches
	}
	return d.submitWait(fmt.Sprintf("%d dispatches", n), n, cbs...)
}

// defaultFenceTimeout bounds one submission: far beyond any step (a 1B
// model's first prefill on lavapipe compiles for about a minute), short
// enough that a hung device surfaces as an error.
const defaultFenceTimeout = 10 * time.Minute

// submitWait submits cbs and blocks until the device has finished them. The
// fence wait is bounded: past it the device is marked hung (ErrTimeout, not
// device loss: the work may still be running and owns its buffers), every
// later submission is refused, and Close leaves the objects alone. kind
// keys the expected duration that SpinWait polls near (the dispatch count;
// 0 for one-shot copies, which are waited for plainly).
func (d *Device) submitWait(what string, kind int, cbs ...vk.CommandBuffer) error {
	if d.hung != nil {
		return d.hung
	}
	start := time.Now()
	r := d.queueSubmit(cbs)
	if err := check("vkQueueSubmit", r, "%s", what); err != nil {
		return err
	}
	r = d.waitFence(start, kind)
	if r == vk.Timeout {
		d.hung = &Error{Call: "vkWaitForFences", Result: vk.Timeout, Detail: fmt.Sprintf(
			"%s not finished after %v; the device is left as it is and refuses further work", what, d.timeout())}
		return d.hung
	}
	if err := check("vkWaitForFences", r, "%s", what); err != nil {
		return err
	}
	return check("vkResetFences", vk.ResetFences(d.dev, 1, []vk.Fence{d.fence}), "%s", what)
}

func (d *Device) timeout() time.Duration {
	if d.fenceTimeout > 0 {
		return d.fenceTimeout
	}
	return defaultFenceTimeout
}

// waitFence waits for the device's fence, for a submission of kind made
// at start, up to the timeout (fencewait.go).
func (d *Device) waitFence(start time.Time, kind int) vk.Result {
	w := &d.waiter
	if w.now == nil { // once: no closures made per step
		w.block = func(t time.Duration) vk.Result {
			if d.fenceWait != nil {
				return d.fenceWait(t)
			}
			return vk.WaitForFences(d.dev, 1, []vk.Fence{d.fence}, vk.True, uint64(t))
		}
		w.poll = func() vk.Result { return vk.GetFenceStatus(d.dev, d.fence) }
		w.now = time.Now
	}
	w.spin = d.SpinWait
	r, polled := w.wait(start, kind, d.timeout())
	if polled {
		d.SpinEnds++
	}
	return r
}

// oneShot records commands into the device's transient command buffer and
// runs them to completion.
func (d *Device) oneShot(record func(cb vk.CommandBuffer)) error {
	if d.hung != nil {
		return d.hung // the buffer may still be pending: no reset
	}
	cb := d.oneOff
	if err := check("vkResetCommandBuffer", vk.ResetCommandBuffer(cb, 0), "one-shot"); err != nil {
		return err
	}
	bi := &vk.CommandBufferBeginInfo{SType: vk.StructureTypeCommandBufferBeginInfo, Flags: vk.CommandBufferUsageFlags(vk.CommandBufferUsageOneTimeSubmitBit)}
	r := vk.BeginCommandBuffer(cb, bi)
	bi.Free()
	if err := check("vkBeginCommandBuffer", r, "one-shot"); err != nil {
		return err
	}
	record(cb)
	if err := check("vkEndCommandBuffer", vk.EndCommandBuffer(cb), "one-shot"); err != nil {
		return err
	}
	return d.submitWait("one-shot copy", 0, cb)
}

// descriptorSet allocates a set for layout, opening a new pool when the
// current one is full. Sets live as long as the device.
func (d *Device) descriptorSet(dsl vk.DescriptorSetLayout, bindings int) (vk.DescriptorSet, error) {
	const setsPerPool = 1024
	if len(d.pools) == 0 || d.pooled >= setsPerPool {
		// Sized for the widest kernels in use (the forward pass's mat-vec
		// binds 10 texel buffers and 4 storage buffers); a set that does
		// not fit opens another pool below.
		p, err := d.createDescriptorPool(setsPerPool,
			[]vk.DescriptorType{vk.DescriptorTypeStorageBuffer, vk.DescriptorTypeUniformBuffer, vk.DescriptorTypeUniformTexelBuffer, vk.DescriptorTypeStorageTexelBuffer},
			[]uint32{setsPerPool * 6, setsPerPool, setsPerPool * 12, setsPerPool})
		if err != nil {
			return nil, err
		}
		d.pools = append(d.pools, p)
		d.pooled = 0
	}
	ai := &vk.DescriptorSetAllocateInfo{SType: vk.StructureTypeDescriptorSetAllocateInfo, DescriptorPool: d.pools[len(d.pools)-1], DescriptorSetCount: 1, PSetLayouts: []vk.DescriptorSetLayout{dsl}}
	var set vk.DescriptorSet
	r := vk.AllocateDescriptorSets(d.dev, ai, &set)
	ai.Free()
	if r == vk.ErrorOutOfPoolMemory || r == vk.ErrorFragmentedPool {
		// The pool ran out of descriptors before sets: start another.
		d.pooled = 1 << 30
		return d.descriptorSet(dsl, bindings)
	}
	if err := check("vkAllocateDescriptorSets", r, "%d bindings", bindings); err != nil {
		return nil, err
	}
	d.pooled++
	return set, nil
}

// Arg binds a range of a buffer to one kernel binding. Write marks ranges
// the kernel writes, which is how the recorder places barriers.
type Arg struct {
	B     *Buffer
	Off   uint64
	Size  uint64 // 0: to the end of the buffer
	Write bool
	// Format of a texel-buffer binding's view; 0 means R32G32B32A32Uint,
	// the widest fetch.
	Format Format
	// Span, when not zero, is the part [Span[0], Span[1]) of the bound
	// range (in bytes from Off) the dispatch actually touches: the binding
	// still covers the whole range, but the barrier placement looks only at
	// the span, so dispatches writing disjoint parts of one buffer run
	// without a barrier between them.
	Span [2]uint64
}

// R and W bind a whole buffer for reading or writing.
func R(b *Buffer) Arg { return Arg{B: b} }
func W(b *Buffer) Arg { return Arg{B: b, Write: true} }

func (a Arg) end() uint64 {
	if a.Size == 0 {
		return a.B.Size
	}
	return a.Off + a.Size
}

// Recorder builds one command buffer of dispatches. It inserts a global
// memory barrier only before a dispatch that touches a range written (or
// writes a range touched) since the last barrier, and, when profiling,
// timestamps after every dispatch.
type Recorder struct {
	d       *Device
	cb      vk.CommandBuffer
	pending []Arg
	query   vk.QueryPool
	maxQ    uint32
	labels  []dispatchMeta
	open    bool
	// fresh: nothing but uploads recorded since Begin, whose barrier is
	// placed before the first dispatch or fill (so an upload shares it).
	fresh bool

	Dispatches int
	Barriers   int
	// barrierAt is, for each barrier, how many dispatches preceded it.
	barrierAt []int
	// StreamBytes is what the recorded dispatches stream per run, as
	// declared by Work after each (for a model's decode step: its weight
	// bytes per token, the numerator of its bandwidth bound).
	StreamBytes uint64

	// gen counts recorded writes (a dispatch, upload or fill writing a
	// buffer) and Begins, never going back; begun is its value at the
	// last Begin and lastWrite each buffer's value at its latest write
	// since. Mark and WrittenSince let a caller reuse what an earlier
	// dispatch of this recording computed (x rounded once for every
	// mat-vec that reads it) while its inputs are unchanged.
	gen, begun uint64
	lastWrite  map[*Buffer]uint64
}

// Mark is the recorder's position in its sequence of writes, for
// WrittenSince.
func (r *Recorder) Mark() uint64 { return r.gen }

// WrittenSince reports whether b may hold something other than what it
// held at mark: a dispatch, upload or fill recorded after mark wrote it, or
// the recording was restarted (Begin) since.
func (r *Recorder) WrittenSince(b *Buffer, mark uint64) bool {
	return mark < r.begun || r.lastWrite[b] > mark
}

// wrote notes the writes among args for WrittenSince.
func (r *Recorder) wrote(args ...Arg) {
	for _, a := range args {
		if a.Write {
			if r.lastWrite == nil {
				r.lastWrite = map[*Buffer]uint64{}
			}
			r.gen++
			r.lastWrite[a.B] = r.gen
		}
	}
}

// NewRecorder allocates a command buffer; profile > 0 reserves that many
// timestamps.
func (d *Device) NewRecorder(profile int) (*Recorder, error) {
	cb, err := d.newCommandBuffer()
	if err != nil {
		return nil, err
	}
	r := &Recorder{d: d, cb: cb}
	if profile > 0 && d.Info.Limits.TimestampBits > 0 {
		qi := &vk.QueryPoolCreateInfo{SType: vk.StructureTypeQueryPoolCreateInfo, QueryType: vk.QueryTypeTimestamp, QueryCount: uint32(profile + 1)}
		var query vk.QueryPool
		res := vk.CreateQueryPool(d.dev, qi, nil, &query)
		qi.Free()
		r.query = query
		if err := check("vkCreateQueryPool", res, "%d timestamps", profile+1); err != nil {
			return nil, err
		}
		r.maxQ = uint32(profile + 1)
		q := r.query
		d.onClose(func() { vk.DestroyQueryPool(d.dev, q, nil) })
	}
	return r, nil
}

// Begin starts (re)recording.
func (r *Recorder) Begin() error {
	if r.d.hung != nil {
		return r.d.hung // the buffer may still be pending: no reset
	}
	if err := check("vkResetCommandBuffer", vk.ResetCommandBuffer(r.cb, 0), "recorder"); err != nil {
		return err
	}
	bi := &vk.CommandBufferBeginInfo{SType: vk.StructureTypeCommandBufferBeginInfo}
	res := vk.BeginCommandBuffer(r.cb, bi)
	bi.Free()
	if err := check("vkBeginCommandBuffer", res, "recorder"); err != nil {
		return err
	}
	r.open, r.pending, r.labels, r.Dispatches, r.Barriers, r.StreamBytes = true, r.pending[:0], r.labels[:0], 0, 0, 0
	r.barrierAt = r.barrierAt[:0]
	r.gen++
	r.begun = r.gen
	clear(r.lastWrite)
	// A fence wait makes earlier submissions' writes available, not
	// visible: one barrier before the first dispatch orders this buffer
	// after them (and after the uploads recorded first).
	r.fresh = true
	if r.maxQ > 0 {
		vk.CmdResetQueryPool(r.cb, r.query, 0, r.maxQ)
		vk.CmdWriteTimestamp(r.cb, vk.PipelineStageTopOfPipeBit, r.query, 0)
	}
	return nil
}

// touched is the byte range of a.B that a dispatch with argument a reads or
// writes.
func (a Arg) touched() (lo, hi uint64) {
	if a.Span != [2]uint64{} {
		return a.Off + a.Span[0], a.Off + a.Span[1]
	}
	return a.Off, a.end()
}

func overlaps(a, b Arg) bool {
	if a.B != b.B || !(a.Write || b.Write) {
		return false
	}
	alo, ahi := a.touched()
	blo, bhi := b.touched()
	return alo < bhi && blo < ahi
}

// Barrier makes all earlier shader writes visible to later shader access.
func (r *Recorder) Barrier() { r.barrier(false) }

// barrier is one global memory barrier from shader and transfer writes to
// shader and transfer access; host adds the host as a reader, for the end
// of a step whose results the host reads after the fence.
func (r *Recorder) barrier(host bool) {
	r.d.cmdBarrier(r.cb, host)
	r.fresh = false
	r.pending = r.pending[:0]
	r.Barriers++
	r.barrierAt = append(r.barrierAt, r.Dispatches)
}

func (r *Recorder) hazard(args []Arg) {
	if r.fresh {
		r.Barrier()
		return
	}
	for _, a := range args {
		for _, p := range r.pending {
			if overlaps(a, p) {
				r.Barrier()
				return
			}
		}
	}
}

// Dispatch records k over groups (x, y, z) with args bound in order and push
// as the push-constant block.
func (r *Recorder) Dispatch(label string, k *Kernel, args []Arg, push []uint32, x, y, z uint32) error {
	if len(args) != k.bindings {
		return fmt.Errorf("dispatch %s: kernel %s has %d bindings, %d given", label, k.Name, k.bindings, len(args))
	}
	if uint32(4*len(push)) != k.push {
		return fmt.Errorf("dispatch %s: kernel %s takes %d bytes of push constants, %d given", label, k.Name, k.push, 4*len(push))
	}
	lim := r.d.Info.Limits
	if x == 0 || y == 0 || z == 0 {
		return nil
	}
	if x > lim.MaxWorkGroupCount[0] || y > lim.MaxWorkGroupCount[1] || z > lim.MaxWorkGroupCount[2] {
		return fmt.Errorf("dispatch %s: %d×%d×%d workgroups exceeds the device limit %v", label, x, y, z, lim.MaxWorkGroupCount)
	}
	set, err := r.d.descriptorSet(k.dsl, k.bindings)
	if err != nil {
		return fmt.Errorf("dispatch %s: %w", label, err)
	}
	writes := make([]descriptorWrite, len(args))
	for i, a := range args {
		size := a.end() - a.Off
		if size > lim.MaxStorageBufferRange {
			return fmt.Errorf("dispatch %s: binding %d (%q) spans %d bytes, over maxStorageBufferRange %d", label, i, a.B.Name, size, lim.MaxStorageBufferRange)
		}
		if a.Off%max(lim.MinStorageAlignment, 1) != 0 {
			return fmt.Errorf("dispatch %s: binding %d (%q) offset %d is not a multiple of minStorageBufferOffsetAlignment %d", label, i, a.B.Name, a.Off, lim.MinStorageAlignment)
		}
		writes[i] = descriptorWrite{typ: k.types[i], buffer: a.B.buf, offset: a.Off, size: size}
		switch k.types[i] {
		case vk.DescriptorTypeUniformTexelBuffer, vk.DescriptorTypeStorageTexelBuffer:
			view, err := a.B.view(a.Off, size, a.Format)
			if err != nil {
				return fmt.Errorf("dispatch %s: %w", label, err)
			}
			writes[i].view = view
		}
	}
	r.d.writeSet(set, writes)
	r.hazard(args)
	vk.CmdBindPipeline(r.cb, vk.PipelineBindPointCompute, k.pipe)
	vk.CmdBindDescriptorSets(r.cb, vk.PipelineBindPointCompute, k.layout, 0, 1, []vk.DescriptorSet{set}, 0, nil)
	if len(push) > 0 {
		vk.CmdPushConstants(r.cb, k.layout, vk.ShaderStageFlags(vk.ShaderStageComputeBit), 0, uint32(4*len(push)), unsafe.Pointer(&push[0]))
	}
	vk.CmdDispatch(r.cb, x, y, z)
	r.pending = append(r.pending, args...)
	r.wrote(args...)
	r.Dispatches++
	if r.maxQ > 0 && uint32(len(r.labels))+1 < r.maxQ {
		r.labels = append(r.labels, dispatchMeta{label: label, kernel: k.Name})
		vk.CmdWriteTimestamp(r.cb, vk.PipelineStageBottomOfPipeBit, r.query, uint32(len(r.labels)))
	}
	return nil
}

// Upload records a copy of src into dst (as much as both hold): a
// host-visible staging of data the dispatches then read from device-local
// memory. dst counts as written, so the first dispatch that reads it waits
// for the copy. Right after Begin it shares the buffer's first barrier:
// the earlier submissions that read dst have finished (their fence was
// waited for), and the copy needs only to be visible to what follows.
func (r *Recorder) Upload(src, dst *Buffer) {
	w := Arg{B: dst, Write: true}
	if !r.fresh {
		r.hazard([]Arg{w, {B: src}})
	}
	r.d.cmdCopy(r.cb, src.buf, dst.buf, 0, 0, min(src.Size, dst.Size))
	r.pending = append(r.pending, w)
	r.wrote(w)
}

// CopyRange records a copy of size bytes of src at srcOff into dst at
// dstOff; copies into disjoint ranges run without a barrier between them,
// and a dispatch reading dst waits for them.
func (r *Recorder) CopyRange(src, dst *Buffer, srcOff, dstOff, size uint64) {
	w := Arg{B: dst, Off: dstOff, Size: size, Write: true}
	r.hazard([]Arg{w, {B: src, Off: srcOff, Size: size}})
	r.d.cmdCopy(r.cb, src.buf, dst.buf, srcOff, dstOff, size)
	r.pending = append(r.pending, w)
	r.wrote(w)
}

// Fill records a vkCmdFillBuffer of the range with the 32-bit pattern v.
func (r *Recorder) Fill(a Arg, v uint32) {
	a.Write = true
	r.hazard([]Arg{a})
	vk.CmdFillBuffer(r.cb, a.B.buf, vk.DeviceSize(a.Off), vk.DeviceSize(a.end()-a.Off), v)
	r.pending = append(r.pending, a)
	r.wrote(a)
}

// End finishes recording; the buffer can then be submitted any number of
// times.
func (r *Recorder) End() error {
	// Later command buffers of the same submission (or later submissions)
	// may read what this one wrote.
	if len(r.pending) > 0 {
		r.barrier(true)
	}
	r.open = false
	return check("vkEndCommandBuffer", vk.EndCommandBuffer(r.cb), "recorder with %d dispatches", r.Dispatches)
}

// Run submits the recorded buffer and waits for it.
func (r *Recorder) Run() error {
	return r.d.submitWait(fmt.Sprintf("%d dispatches", r.Dispatches), r.Dispatches, r.cb)
}

type dispatchMeta struct {
	label, kernel string
	bytes, macs   uint64
}

// Work declares what the last dispatch does: how many bytes it streams
// (added to StreamBytes) and, for the profile (KernelTime), how many
// multiply-adds; the device cannot tell, only the recorder's caller knows.
func (r *Recorder) Work(bytes, macs uint64) {
	r.StreamBytes += bytes
	if len(r.labels) > 0 {
		r.labels[len(r.labels)-1].bytes += bytes
		r.labels[len(r.labels)-1].macs += macs
	}
}

// KernelTime is the device time of one recorded dispatch.
type KernelTime struct {
	Label  string // what it computes, e.g. "L3 qkv"
	Kernel string // the pipeline's shader
	Bytes  uint64 // bytes it streams, as declared by Recorder.Work (0: none declared)
	MACs   uint64 // multiply-adds, as declared by Recorder.Work
	Time   time.Duration
}

// Timings reads the timestamps of the last run: one entry per dispatch.
func (r *Recorder) Timings() ([]KernelTime, error) {
	n := uint32(len(r.labels))
	if r.maxQ == 0 || n == 0 {
		return nil, nil
	}
	if int(n) < r.Dispatches {
		return nil, fmt.Errorf("profile: %d timestamps for %d dispatches; the recorder's pool is too small", n, r.Dispatches)
	}
	ts := make([]uint64, n+1)
	res := vk.GetQueryPoolResults(r.d.dev, r.query, 0, n+1, uint(8*(n+1)), unsafe.Pointer(&ts[0]), 8, vk.QueryResultFlags(vk.QueryResult64Bit|vk.QueryResultWaitBit))
	if err := check("vkGetQueryPoolResults", res, "%d timestamps", n+1); err != nil {
		return nil, err
	}
	period := float64(r.d.Info.Limits.TimestampPeriod)
	bits := r.d.Info.Limits.TimestampBits
	mask := ^uint64(0)
	if bits < 64 {
		mask = 1<<bits - 1
	}
	out := make([]KernelTime, n)
	for i := uint32(0); i < n; i++ {
		dt := (ts[i+1] - ts[i]) & mask
		m := r.labels[i]
		out[i] = KernelTime{Label: m.label, Kernel: m.kernel, Bytes: m.bytes, MACs: m.macs, Time: time.Duration(float64(dt) * period)}
	}
	return out, nil
}

// Recorded lists the dispatches recorded since Begin with their labels,
// kernels and declared work (Time zero), on a recorder made with
// timestamps (NewRecorder(profile > 0)); nil otherwise.
func (r *Recorder) Recorded() []KernelTime {
	var out []KernelTime
	for _, m := range r.labels {
		out = append(out, KernelTime{Label: m.label, Kernel: m.kernel, Bytes: m.bytes, MACs: m.macs})
	}
	return out
}

// BarriersBefore is, for each barrier recorded since Begin, how many
// dispatches preceded it.
func (r *Recorder) BarriersBefore() []int { return append([]int(nil), r.barrierAt...) }
