// The packed 4-way int8 dot product of the integer-dot kernels
// (matvec_id.comp, matmul.comp's IDOT variants). glslc here (shaderc
// 2023.2, glslang 11.13) lacks GL_EXT_integer_dot_product
// (dotPacked4x8AccSatEXT), so the instruction is declared through
// GL_EXT_spirv_intrinsics, which the including kernel enables.
//
// OpSDotAccSat (4453): acc + the dot product of two 32-bit words as four
// int8 lanes each (packed vector format 0, PackedVectorFormat4x8Bit) in
// one instruction, as NVIDIA's IDP4A and AMD's V_DOT4_I32_I8 take the
// accumulator; capabilities DotProductInput4x8BitPacked (6018) and
// DotProduct (6019). It saturates, which the kernels' sums never reach
// (|Σq·x| < 2^24), so it is the exact sum with the add saved.
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6018, 6019], id = 4453)
int sdot_acc_sat_packed(int a, int b, int acc, spirv_literal int format);

int dot4_acc(uint a, uint b, int acc) { return sdot_acc_sat_packed(int(a), int(b), acc, 0); }
